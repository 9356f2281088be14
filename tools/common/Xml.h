// XML 1.0 text for the tools' reports: escaping for attributes and element
// content (the same escaping is valid HTML, so the HTML pages use it too).
// Characters XML cannot carry (control characters, malformed UTF-8, U+FFFE,
// U+FFFF) become U+FFFD.
//
// This file does not write documents (Junit.h, HtmlPage.h do).
#pragma once

#include <string>

namespace shardcheck {

/// `text` escaped for an XML (or HTML) attribute or element.
std::string xmlEscape(const std::string &text);

} // namespace shardcheck
