#!/usr/bin/env python3
"""Reads check-sharding's and run-plan's HTML report pages with Python's
html.parser (tests/html_report_test.cpp runs it): `read_html_report.py PAGE...` checks that
every page is well formed (every element closed in order, void elements
aside; no stray end tag), self-contained (no <link>, no src= attribute, no
link out of the report: only #anchors and the report's own .html pages), and
that every #anchor a link names exists; then prints one JSON object per page
name: its edge verdicts by id (the class of each <details class="edge ...">),
which of them are open, its banners, its <script> count, whether it holds an
SVG graph or the DOT text, the ids the graph's arrows link to, its table rows
with an id (run-plan's steps, tensors and runs: id -> classes), and its text.

It does not judge the verdicts (the C++ test does); it prints what is wrong
and exits 1, or prints the JSON and exits 0.
"""
import json
import os
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.links = [], [], set(), []
        self.edges, self.open_edges, self.banners, self.arrows = {}, [], [], []
        self.scripts, self.svg, self.dot_text, self.text = 0, False, False, []
        self.rows = {}

    def handle_starttag(self, tag, attrs):
        self.element(tag, dict(attrs))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.element(tag, dict(attrs))

    def element(self, tag, attrs):
        classes = (attrs.get("class") or "").split()
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "link" or "src" in attrs:
            self.errors.append("loads another resource: <%s %s>" % (tag, attrs))
        for key in ("href", "xlink:href"):
            if key in attrs:
                self.links.append(attrs[key])
                if tag == "a" and key == "xlink:href" and self.svg:
                    self.arrows.append(attrs[key])
        if tag == "details" and "edge" in classes:
            self.edges[attrs.get("id")] = [c for c in classes if c != "edge"][0]
            if "open" in attrs:
                self.open_edges.append(attrs.get("id"))
        if tag == "tr" and "id" in attrs:
            self.rows[attrs["id"]] = classes
        if tag == "div" and "banner" in classes:
            self.banners.append([c for c in classes if c != "banner"][0])
        self.scripts += tag == "script"
        self.svg = self.svg or tag == "svg"
        self.dot_text = self.dot_text or (tag == "pre" and "dot" in classes)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("end tag </%s> closes <%s>" % (tag, self.stack[-1] if self.stack else ""))
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def read(path, pages):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    errors = list(page.errors)
    if page.stack:
        errors.append("never closed: " + " ".join(page.stack))
    for link in page.links:
        if link.startswith("#"):
            if link[1:] not in page.ids:
                errors.append("link to a missing anchor " + link)
        elif link not in pages:
            errors.append("link out of the report: " + link)
    return errors, {"edges": page.edges, "open": page.open_edges, "banners": page.banners,
                    "scripts": page.scripts, "svg": page.svg, "dot_text": page.dot_text,
                    "arrows": page.arrows, "rows": page.rows, "text": "".join(page.text)}


def main(paths):
    pages = {os.path.basename(p) for p in paths}
    result, ok = {}, True
    for path in paths:
        errors, summary = read(path, pages)
        for e in errors:
            print("%s: %s" % (path, e))
        ok = ok and not errors
        result[os.path.basename(path)] = summary
    if ok:
        print(json.dumps(result))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
