package cdc.lakehouse.json;

/** The value of a JSON integer token's text. */
final class Numbers {
  private Numbers() {}

  /** The 64-bit value of a JSON integer's text ({@code -0} is 0), or null beyond 64 bits. */
  static Long parseLong(char[] buffer, int offset, int length) {
    int end = offset + length;
    boolean negative = buffer[offset] == '-';
    int i = negative ? offset + 1 : offset;
    long limit = negative ? Long.MIN_VALUE : -Long.MAX_VALUE;
    long multiplyMin = limit / 10;
    long result = 0; // accumulated negatively, as Long.parseLong does
    for (; i < end; i++) {
      int digit = buffer[i] - '0';
      if (result < multiplyMin) {
        return null;
      }
      result *= 10;
      if (result < limit + digit) {
        return null;
      }
      result -= digit;
    }
    return negative ? result : -result;
  }
}
