package cdc.lakehouse.json;

/**
 * Refuses a string that escapes a lone surrogate ({@code "\ud800"}): valid JSON syntax, but no
 * Unicode text, so Spark would store it as {@code ?} (and Python's decoders fail on it).
 */
final class Surrogates {
  private Surrogates() {}

  static void check(String text) throws ExactJson.Failure {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < text.length()
            && Character.isLowSurrogate(text.charAt(i + 1))) {
          i++;
        } else {
          throw lone(c);
        }
      }
    }
  }

  static void check(char[] buffer, int offset, int length) throws ExactJson.Failure {
    int end = offset + length;
    for (int i = offset; i < end; i++) {
      char c = buffer[i];
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(buffer[i + 1])) {
          i++;
        } else {
          throw lone(c);
        }
      }
    }
  }

  private static ExactJson.Failure lone(char c) {
    return new ExactJson.Failure(
        "invalid_json",
        String.format(
            "not valid JSON: a string escapes the lone surrogate \\u%04x, which is no Unicode text",
            (int) c));
  }
}
