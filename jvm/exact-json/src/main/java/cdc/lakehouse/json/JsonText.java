package cdc.lakehouse.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * The text of a JSON value, as Python's {@code cdc_lakehouse.decode.json_text.value_text} gives
 * it, byte for byte.
 *
 * <p>A scalar: a string unescaped, a number's exact text, {@code true} / {@code false}. An object
 * or array: compact JSON (no blank space, {@code ,} and {@code :}), keys in message order, numbers
 * as sent, {@code null} / {@code true} / {@code false}; a key written as Python's {@code
 * json.dumps} writes it (ASCII only: {@code \"}, {@code \\}, {@code \b \f \n \r \t}, every other
 * character outside {@code ' '..'~'} as a lowercase {@code \}{@code uXXXX}, one per UTF-16 unit),
 * a string value as {@code json.dumps(value, ensure_ascii=False)} writes it (the same escapes for
 * {@code "}, {@code \} and characters below U+0020; everything else, DEL and U+2028 included, as
 * it is).
 */
final class JsonText {
  private JsonText() {}

  /** The text of the value starting at {@code token} (not null: JSON null is the caller's). */
  static String text(JsonParser parser, JsonToken token, boolean checkSurrogates)
      throws IOException, ExactJson.Failure {
    switch (token) {
      case VALUE_STRING:
        String text = parser.getText();
        if (checkSurrogates) {
          Surrogates.check(text);
        }
        return text;
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        return parser.getText();
      case VALUE_TRUE:
        return "true";
      case VALUE_FALSE:
        return "false";
      case START_OBJECT:
      case START_ARRAY:
        StringBuilder out = new StringBuilder(64);
        render(parser, token, out, checkSurrogates);
        return out.toString();
      default:
        throw truncated(token);
    }
  }

  private static ExactJson.Failure truncated(JsonToken token) {
    return new ExactJson.Failure("invalid_json", "not valid JSON: unexpected " + token);
  }

  /**
   * Render the value starting at {@code token} as compact JSON into {@code out}; with {@code out}
   * null only read it (checking strings for lone surrogates when {@code checkSurrogates}).
   */
  static void render(JsonParser parser, JsonToken token, StringBuilder out, boolean checkSurrogates)
      throws IOException, ExactJson.Failure {
    if (token == null) {
      throw truncated(null);
    }
    switch (token) {
      case START_OBJECT:
        {
          if (out != null) {
            out.append('{');
          }
          boolean first = true;
          while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
            String key = parser.currentName();
            if (checkSurrogates) {
              Surrogates.check(key);
            }
            if (out != null) {
              if (!first) {
                out.append(',');
              }
              appendAsciiString(out, key);
              out.append(':');
            }
            first = false;
            render(parser, parser.nextToken(), out, checkSurrogates);
          }
          if (token != JsonToken.END_OBJECT) {
            throw truncated(token);
          }
          if (out != null) {
            out.append('}');
          }
          return;
        }
      case START_ARRAY:
        {
          if (out != null) {
            out.append('[');
          }
          boolean first = true;
          while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
            if (out != null && !first) {
              out.append(',');
            }
            first = false;
            render(parser, token, out, checkSurrogates);
          }
          if (out != null) {
            out.append(']');
          }
          return;
        }
      case VALUE_STRING:
        {
          if (!checkSurrogates && out == null) {
            return;
          }
          char[] buffer = parser.getTextCharacters();
          int offset = parser.getTextOffset();
          int length = parser.getTextLength();
          if (checkSurrogates) {
            Surrogates.check(buffer, offset, length);
          }
          if (out != null) {
            appendString(out, buffer, offset, offset + length);
          }
          return;
        }
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        if (out != null) {
          out.append(parser.getTextCharacters(), parser.getTextOffset(), parser.getTextLength());
        }
        return;
      case VALUE_TRUE:
        if (out != null) {
          out.append("true");
        }
        return;
      case VALUE_FALSE:
        if (out != null) {
          out.append("false");
        }
        return;
      case VALUE_NULL:
        if (out != null) {
          out.append("null");
        }
        return;
      default:
        throw truncated(token);
    }
  }

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private static void appendUnicodeEscape(StringBuilder out, char c) {
    out.append('\\')
        .append('u')
        .append(HEX[(c >> 12) & 0xf])
        .append(HEX[(c >> 8) & 0xf])
        .append(HEX[(c >> 4) & 0xf])
        .append(HEX[c & 0xf]);
  }

  /** Appends Python json's short escape of {@code c}; false when {@code c} has none. */
  private static boolean appendShortEscape(StringBuilder out, char c) {
    switch (c) {
      case '"':
        out.append("\\\"");
        return true;
      case '\\':
        out.append("\\\\");
        return true;
      case '\b':
        out.append("\\b");
        return true;
      case '\f':
        out.append("\\f");
        return true;
      case '\n':
        out.append("\\n");
        return true;
      case '\r':
        out.append("\\r");
        return true;
      case '\t':
        out.append("\\t");
        return true;
      default:
        return false;
    }
  }

  /** {@code json.dumps(value, ensure_ascii=False)} of a string. */
  static void appendString(StringBuilder out, char[] buffer, int start, int end) {
    out.append('"');
    int run = start; // characters kept as they are, appended in runs
    for (int i = start; i < end; i++) {
      char c = buffer[i];
      if (c >= 0x20 && c != '"' && c != '\\') {
        continue;
      }
      out.append(buffer, run, i - run);
      if (!appendShortEscape(out, c)) {
        appendUnicodeEscape(out, c);
      }
      run = i + 1;
    }
    out.append(buffer, run, end - run).append('"');
  }

  /** {@code json.dumps(key)} (ensure_ascii) of a string. */
  static void appendAsciiString(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
        out.append(c);
      } else if (!appendShortEscape(out, c)) {
        appendUnicodeEscape(out, c);
      }
    }
    out.append('"');
  }
}
