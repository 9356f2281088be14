#!/usr/bin/env python3
"""Validates check-sharding's CI outputs with standard tools (tests/ci_gate_test.cpp
runs it): `sarif SCHEMA FILE` validates a SARIF log against a JSON schema with
the jsonschema package (Debian's python3-jsonschema, scripts/dev.sh installs it),
`junit FILE` parses JUnit XML with xml.etree and checks that every count
attribute equals the elements it counts.

It does not judge what the findings are (the C++ test does); it prints what is
wrong and exits 1, or exits 0.
"""
import json
import sys
import xml.etree.ElementTree as ET


def validate_sarif(schema_path, log_path):
    import jsonschema  # imported here: the junit check needs only the standard library

    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(log_path, encoding="utf-8") as f:
        log = json.load(f)
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    for e in errors:
        print("%s: at /%s: %s" % (log_path, "/".join(map(str, e.absolute_path)), e.message))
    return not errors


def case_counts(case):
    failed = case.find("failure") is not None
    errored = case.find("error") is not None
    skipped = case.find("skipped") is not None
    return {"tests": 1, "failures": int(failed), "errors": int(errored), "skipped": int(skipped)}


def check_counts(element, counts, where):
    ok = True
    for key, value in counts.items():
        if element.get(key) != str(value):
            print("%s: %s=%r, but %d counted" % (where, key, element.get(key), value))
            ok = False
    return ok


def validate_junit(path):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        print("%s: root element is <%s>, not <testsuites>" % (path, root.tag))
        return False
    ok = True
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        if suite.tag != "testsuite" or not suite.get("name"):
            print("%s: <%s> without a name under <testsuites>" % (path, suite.tag))
            return False
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for case in suite:
            if case.tag != "testcase" or not case.get("name") or not case.get("classname"):
                print("%s: <%s> in suite %s is no named testcase" % (path, case.tag, suite.get("name")))
                return False
            for key, value in case_counts(case).items():
                counts[key] += value
        ok = check_counts(suite, counts, "%s: suite %s" % (path, suite.get("name"))) and ok
        for key in total:
            total[key] += counts[key]
    return check_counts(root, total, "%s: testsuites" % path) and ok


def main(argv):
    if len(argv) == 4 and argv[1] == "sarif":
        return 0 if validate_sarif(argv[2], argv[3]) else 1
    if len(argv) == 3 and argv[1] == "junit":
        return 0 if validate_junit(argv[2]) else 1
    print("usage: validate_ci_outputs.py sarif SCHEMA FILE | junit FILE")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
