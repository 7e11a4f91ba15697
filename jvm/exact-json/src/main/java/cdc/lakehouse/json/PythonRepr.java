package cdc.lakehouse.json;

/** Python's {@code repr} of a str (for details worded as the Python decoders word them). */
final class PythonRepr {
  private PythonRepr() {}

  static String of(String text) {
    char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder out = new StringBuilder(text.length() + 2).append(quote);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == quote || c == '\\') {
        out.append('\\').append(c);
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c == '\t') {
        out.append("\\t");
      } else if (c < 0x20 || (c >= 0x7f && c <= 0xa0)) {
        out.append(String.format("\\x%02x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append(quote).toString();
  }
}
