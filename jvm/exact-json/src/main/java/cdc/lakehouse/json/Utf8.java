package cdc.lakehouse.json;

/** Strict UTF-8 (RFC 3629), with the error texts of Python's {@code bytes.decode("utf-8")}. */
final class Utf8 {
  private Utf8() {}

  /**
   * Check that {@code raw} is UTF-8: no overlong form, no encoded surrogate (U+D800..U+DFFF), no
   * code point beyond U+10FFFF, no truncated sequence. Jackson accepts some of these.
   *
   * @return whether the text may escape a surrogate ({@code \}{@code u} then {@code d} or {@code
   *     D}): only then must its strings be checked for lone surrogates
   * @throws ExactJson.Failure {@code invalid_utf8}, detail {@code not UTF-8: <reason> at byte <n>}
   *     (reason and n as Python's UnicodeDecodeError: the start of the bad sequence)
   */
  static boolean check(byte[] raw) throws ExactJson.Failure {
    boolean surrogateEscape = false;
    int n = raw.length;
    int i = 0;
    while (i < n) {
      int b = raw[i];
      if (b >= 0) {
        if (b == '\\' && i + 2 < n && raw[i + 1] == 'u' && (raw[i + 2] | 0x20) == 'd') {
          surrogateEscape = true;
        }
        i++;
        continue;
      }
      b &= 0xff;
      int need;
      int low = 0x80;
      int high = 0xBF;
      if (b < 0xC2) {
        throw fail("invalid start byte", i);
      } else if (b < 0xE0) {
        need = 1;
      } else if (b < 0xF0) {
        need = 2;
        if (b == 0xE0) {
          low = 0xA0; // below: overlong
        } else if (b == 0xED) {
          high = 0x9F; // above: a surrogate
        }
      } else if (b < 0xF5) {
        need = 3;
        if (b == 0xF0) {
          low = 0x90; // below: overlong
        } else if (b == 0xF4) {
          high = 0x8F; // above: beyond U+10FFFF
        }
      } else {
        throw fail("invalid start byte", i);
      }
      for (int k = 1; k <= need; k++) {
        if (i + k >= n) {
          throw fail("unexpected end of data", i);
        }
        int c = raw[i + k] & 0xff;
        if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xBF)) {
          throw fail("invalid continuation byte", i);
        }
      }
      i += need + 1;
    }
    return surrogateEscape;
  }

  private static ExactJson.Failure fail(String reason, int at) {
    return new ExactJson.Failure("invalid_utf8", "not UTF-8: " + reason + " at byte " + at);
  }
}
