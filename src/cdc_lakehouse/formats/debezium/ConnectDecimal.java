package cdc_lakehouse.formats.debezium;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Base64;

/**
 * The text of a Kafka Connect {@code org.apache.kafka.connect.data.Decimal} value as the JSON
 * converter writes it with schemas: base64 of the two's-complement big-endian unscaled integer,
 * the scale a schema parameter. Called from Spark SQL by {@code java_method} (models/staging/
 * debezium/stg_debezium__events.sql), any length exact.
 */
public final class ConnectDecimal {
  private ConnectDecimal() {}

  /**
   * The plain decimal text of {@code base64} with exactly {@code scale} fraction digits (e.g.
   * {@code "/g4="} with scale 2 is {@code -4.98}); null for a null value, and the empty text for
   * a text that is not base64 of at least one byte (Spark's {@code java_method} renders a null
   * result as the text {@code "null"}, so the caller maps the empty text to NULL itself).
   */
  public static String text(String base64, int scale) {
    if (base64 == null) {
      return null;
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException invalid) {
      return "";
    }
    if (bytes.length == 0) {
      return "";
    }
    return new BigDecimal(new BigInteger(bytes), scale).toPlainString();
  }
}
