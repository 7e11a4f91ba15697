package cdc.lakehouse.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Exact JSON decoding for Spark SQL: a UDF from the UTF-8 bytes of one JSON object to a struct
 * of the fields a schema declares (nested objects as structs), every value kept as the text that
 * was sent.
 *
 * <p>The Java twin of {@code cdc_lakehouse.decode.json_text} (Python): Spark's {@code from_json}
 * reads a JSON number into a string field as a double's text ({@code 1.50} becomes {@code
 * 1.5}); here a number keeps its text exactly ({@code 1.50}, {@code 1e3}, {@code -0}, {@code
 * -0E+0}, 41-digit decimals), and a nested object or array becomes the compact JSON text that
 * Python's {@code json_text.value_text} gives, byte for byte.
 *
 * <p>Declared field types (the schema given to the constructor or {@link #register}):
 *
 * <ul>
 *   <li>{@code string}: a string value unescaped; a number's exact text; {@code true} / {@code
 *       false}; an object or array as compact JSON text (see {@link JsonText}); JSON null -> NULL.
 *   <li>{@code boolean}: {@code true} / {@code false} or null.
 *   <li>{@code bigint}: a JSON integer of 64 bits ({@code -0} reads 0) or null.
 *   <li>{@code map<string,string>}: an object (values rendered like {@code string}, in message
 *       order) or null.
 *   <li>{@code array<string>}: an array (elements rendered like {@code string}) or null.
 *   <li>{@code array<map<string,string>>}: an array of objects (a null element is a NULL map) or
 *       null.
 *   <li>{@code struct<...>}: an object whose fields are read by these same rules (nested to any
 *       depth) or null.
 *   <li>{@code array<struct<...>>}: an array of such objects (a null element is a NULL struct) or
 *       null.
 * </ul>
 *
 * <p>A field absent from the message is NULL; keys match field names exactly (case-sensitive).
 * Keys outside the schema are skipped but still parsed and checked. A field error names the
 * field's path: {@code payload.op}, {@code schema.dataColumn[2].name}.
 *
 * <p>Errors never throw: the row then has every field NULL and {@code decode_error} / {@code
 * decode_error_detail} set, with the reason codes of the Python decoders ({@code
 * cdc_lakehouse.decode.shared.STRUCTURAL_REASONS}): {@code empty_value} (NULL or zero bytes),
 * {@code invalid_utf8} (strict UTF-8: overlong forms, encoded surrogates, code points beyond
 * U+10FFFF and truncated sequences are refused; detail as Python's), {@code invalid_json}
 * (syntax, truncated text, trailing data, NaN / Infinity, a byte order mark, nesting deeper than
 * {@value #MAX_JSON_DEPTH} levels, a string escaping a lone surrogate), {@code duplicate_key}
 * (any object at any depth), {@code not_an_object}, {@code invalid_field_type} (a value of a
 * JSON type its field cannot hold) and {@code invalid_field_value} (a {@code bigint} beyond 64
 * bits). Syntax errors win over field errors: the whole text is parsed before a field error is
 * reported. A failure of the decoder itself (a bug) gives {@code decoder_error}.
 */
public final class ExactJson implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;

  /** Deepest nesting of objects and arrays accepted; the document itself is level 1. */
  public static final int MAX_JSON_DEPTH = 128;

  /** The two fields appended to the schema's. */
  public static final String DECODE_ERROR = "decode_error";

  public static final String DECODE_ERROR_DETAIL = "decode_error_detail";

  static final String EMPTY_VALUE_DETAIL = "the Kafka record has no value (NULL or zero bytes)";

  /** Thread-safe; parsers share its symbol tables. */
  static final JsonFactory FACTORY =
      JsonFactory.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNumberLength(Integer.MAX_VALUE)
                  .maxStringLength(Integer.MAX_VALUE)
                  .maxNameLength(Integer.MAX_VALUE)
                  .maxNestingDepth(MAX_JSON_DEPTH)
                  .build())
          .build();

  enum Kind {
    STRING,
    BOOLEAN,
    BIGINT,
    MAP,
    ARRAY_STRING,
    ARRAY_MAP,
    STRUCT,
    ARRAY_STRUCT
  }

  /** The fields of one object: the schema's top level, or a {@code struct} field's. */
  static final class Fields implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    final String[] names;
    final Kind[] kinds;
    /** Per field: the fields of a {@code struct} or {@code array<struct>} field, else null. */
    final Fields[] children;
    final HashMap<String, Integer> positions = new HashMap<>();

    Fields(StructType schema, String prefix) {
      StructField[] fields = schema.fields();
      names = new String[fields.length];
      kinds = new Kind[fields.length];
      children = new Fields[fields.length];
      for (int i = 0; i < fields.length; i++) {
        String name = fields[i].name();
        if (positions.put(name, i) != null) {
          throw new IllegalArgumentException("the field " + prefix + name + " is declared twice");
        }
        names[i] = name;
        DataType type = fields[i].dataType();
        kinds[i] = kindOf(prefix + name, type);
        if (kinds[i] == Kind.STRUCT) {
          children[i] = new Fields((StructType) type, prefix + name + ".");
        } else if (kinds[i] == Kind.ARRAY_STRUCT) {
          children[i] =
              new Fields((StructType) ((ArrayType) type).elementType(), prefix + name + "[].");
        }
      }
    }
  }

  private final StructType schema;
  private final Fields fields;

  /**
   * @param schema the top-level fields to extract; each of a supported type (class doc)
   * @throws IllegalArgumentException a field of another type, a name repeated, or one named
   *     {@code decode_error} / {@code decode_error_detail}
   */
  public ExactJson(StructType schema) {
    this.schema = schema;
    for (String name : schema.fieldNames()) {
      if (name.equals(DECODE_ERROR) || name.equals(DECODE_ERROR_DETAIL)) {
        throw new IllegalArgumentException("the field " + name + " is the one ExactJson adds");
      }
    }
    fields = new Fields(schema, "");
  }

  private static boolean isStringMap(DataType type) {
    return type instanceof MapType map
        && map.keyType() instanceof StringType
        && map.valueType() instanceof StringType;
  }

  static Kind kindOf(String name, DataType type) {
    if (type instanceof StringType) {
      return Kind.STRING;
    }
    if (type instanceof BooleanType) {
      return Kind.BOOLEAN;
    }
    if (type instanceof LongType) {
      return Kind.BIGINT;
    }
    if (isStringMap(type)) {
      return Kind.MAP;
    }
    if (type instanceof StructType) {
      return Kind.STRUCT;
    }
    if (type instanceof ArrayType array) {
      if (array.elementType() instanceof StringType) {
        return Kind.ARRAY_STRING;
      }
      if (isStringMap(array.elementType())) {
        return Kind.ARRAY_MAP;
      }
      if (array.elementType() instanceof StructType) {
        return Kind.ARRAY_STRUCT;
      }
    }
    throw new IllegalArgumentException(
        "the field "
            + name
            + " has the type "
            + type.simpleString()
            + ": ExactJson reads string, boolean, bigint, map<string,string>, array<string>,"
            + " array<map<string,string>>, struct<...> and array<struct<...>>");
  }

  /** The schema's fields followed by {@code decode_error} and {@code decode_error_detail}. */
  public static StructType returnType(StructType schema) {
    return schema
        .add(DECODE_ERROR, DataTypes.StringType, true)
        .add(DECODE_ERROR_DETAIL, DataTypes.StringType, true);
  }

  public StructType schema() {
    return schema;
  }

  /**
   * Register the function {@code name} (one binary argument) returning {@link #returnType} of
   * the schema in {@code schemaDdl} (e.g. {@code "type string, isDdl boolean, es bigint"}).
   */
  public static void register(SparkSession spark, String name, String schemaDdl) {
    StructType schema = StructType.fromDDL(schemaDdl);
    spark.udf().register(name, new ExactJson(schema), returnType(schema));
  }

  /** A message that cannot be decoded: its reason code and detail. */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;
    final String reason;
    final String detail;

    Failure(String reason, String detail) {
      super(detail, null, false, false);
      this.reason = reason;
      this.detail = detail;
    }
  }

  @Override
  public Row call(byte[] raw) {
    try {
      return decode(raw);
    } catch (Failure failure) {
      return errorRow(failure.reason, failure.detail);
    } catch (Exception | StackOverflowError bug) {
      return errorRow("decoder_error", bug.getClass().getName() + ": " + bug.getMessage());
    }
  }

  private Row errorRow(String reason, String detail) {
    int n = fields.names.length;
    Object[] values = new Object[n + 2];
    values[n] = reason;
    values[n + 1] = detail;
    return RowFactory.create(values);
  }

  /** The field being read and the first field error seen (reported if the syntax is valid). */
  private static final class State {
    final JsonParser parser;
    final boolean checkSurrogates;
    Failure fieldError;

    State(JsonParser parser, boolean checkSurrogates) {
      this.parser = parser;
      this.checkSurrogates = checkSurrogates;
    }

    void fieldError(String reason, String detail) {
      if (fieldError == null) {
        fieldError = new Failure(reason, detail);
      }
    }
  }

  Row decode(byte[] raw) throws Failure {
    if (raw == null || raw.length == 0) {
      throw new Failure("empty_value", EMPTY_VALUE_DETAIL);
    }
    boolean surrogateEscapes = Utf8.check(raw);
    // Jackson reads UTF-16 / UTF-32 when zero bytes or a byte order mark start the text, and
    // skips a UTF-8 byte order mark: none of them starts a JSON text
    if (raw.length >= 3
        && (raw[0] & 0xff) == 0xEF
        && (raw[1] & 0xff) == 0xBB
        && (raw[2] & 0xff) == 0xBF) {
      throw invalidJson("a byte order mark (U+FEFF) before the value at byte 0");
    }
    for (int i = 0; i < Math.min(4, raw.length); i++) {
      if (raw[i] == 0) {
        throw invalidJson("a NUL character (code 0) at byte " + i);
      }
    }
    Object[] values = new Object[fields.names.length + 2];
    try (JsonParser parser = FACTORY.createParser(raw)) {
      State state = new State(parser, surrogateEscapes);
      JsonToken token = parser.nextToken();
      if (token == null) {
        throw invalidJson("no value (only blank space)");
      }
      if (token != JsonToken.START_OBJECT) {
        String type = jsonType(token);
        skip(state, token);
        end(parser);
        throw new Failure("not_an_object", "JSON " + type + ", not an object");
      }
      token = readFields(state, fields, "", values);
      if (token != JsonToken.END_OBJECT) {
        throw invalidJson("the object does not end");
      }
      end(parser);
      if (state.fieldError != null) {
        throw state.fieldError;
      }
    } catch (StreamConstraintsException tooDeep) {
      String message = String.valueOf(tooDeep.getOriginalMessage());
      throw invalidJson(
          message.contains("nesting depth")
              ? "nested deeper than " + MAX_JSON_DEPTH + " levels"
              : message);
    } catch (JsonProcessingException invalid) {
      String message = String.valueOf(invalid.getOriginalMessage());
      if (message.startsWith("Duplicate field '")) {
        throw new Failure("duplicate_key", duplicateDetail(invalid, message));
      }
      throw invalidJson(message + at(invalid));
    } catch (IOException unexpected) { // a byte array source does no I/O
      throw invalidJson(String.valueOf(unexpected.getMessage()));
    }
    return RowFactory.create(values);
  }

  private static Failure invalidJson(String what) {
    return new Failure("invalid_json", "not valid JSON: " + what);
  }

  private static String at(JsonProcessingException invalid) {
    if (invalid.getLocation() == null || invalid.getLocation().getByteOffset() < 0) {
      return "";
    }
    return " at byte " + invalid.getLocation().getByteOffset();
  }

  private static String duplicateDetail(JsonProcessingException invalid, String message) {
    String key = null;
    if (invalid.getProcessor() instanceof JsonParser parser) {
      JsonStreamContext context = parser.getParsingContext();
      key = context == null ? null : context.getCurrentName();
    }
    if (key == null) {
      key = message.substring("Duplicate field '".length(), message.length() - 1);
    }
    return "the key " + PythonRepr.of(key) + " appears twice in one object";
  }

  /** After the root value: nothing but blank space. */
  private static void end(JsonParser parser) throws IOException, Failure {
    if (parser.nextToken() != null) {
      throw invalidJson(
          "extra data after the JSON value at byte "
              + parser.currentTokenLocation().getByteOffset());
    }
  }

  /** How Python's Canal decoder names a JSON type in a detail. */
  static String jsonType(JsonToken token) {
    switch (token) {
      case START_OBJECT:
        return "an object";
      case START_ARRAY:
        return "an array";
      case VALUE_STRING:
        return "a string";
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        return "a number";
      case VALUE_TRUE:
      case VALUE_FALSE:
        return "a boolean";
      case VALUE_NULL:
        return "null";
      default:
        return String.valueOf(token);
    }
  }

  /** Skip the value starting at {@code token}, still checking it. */
  private static void skip(State state, JsonToken token) throws IOException, Failure {
    if (state.checkSurrogates) {
      JsonText.render(state.parser, token, null, true);
    } else if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
      state.parser.skipChildren();
    }
  }

  /**
   * Read the fields of the object whose START_OBJECT was just read into {@code values} (by
   * position in {@code fields}; a key outside them skipped, still checked).
   *
   * @return the token after the last field: END_OBJECT unless the text is broken
   */
  private static JsonToken readFields(State state, Fields fields, String prefix, Object[] values)
      throws IOException, Failure {
    JsonParser parser = state.parser;
    JsonToken token;
    while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      if (state.checkSurrogates) {
        Surrogates.check(name);
      }
      token = parser.nextToken();
      Integer position = fields.positions.get(name);
      if (position == null) {
        skip(state, token);
      } else {
        int i = position;
        values[i] = read(state, fields.kinds[i], prefix + name, token, fields.children[i]);
      }
    }
    return token;
  }

  /** The object whose START_OBJECT was just read, as a row of {@code fields}. */
  private static Row readStruct(State state, Fields fields, String path)
      throws IOException, Failure {
    Object[] values = new Object[fields.names.length];
    readFields(state, fields, path + ".", values);
    return RowFactory.create(values);
  }

  private static Object read(State state, Kind kind, String name, JsonToken token, Fields children)
      throws IOException, Failure {
    JsonParser parser = state.parser;
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    switch (kind) {
      case STRING:
        return JsonText.text(parser, token, state.checkSurrogates);
      case BOOLEAN:
        if (token == JsonToken.VALUE_TRUE) {
          return Boolean.TRUE;
        }
        if (token == JsonToken.VALUE_FALSE) {
          return Boolean.FALSE;
        }
        return wrongType(state, name + " must be true or false", token);
      case BIGINT:
        if (token == JsonToken.VALUE_NUMBER_INT) {
          Long value = Numbers.parseLong(parser.getTextCharacters(), parser.getTextOffset(),
              parser.getTextLength());
          if (value == null) {
            state.fieldError("invalid_field_value", name + " is beyond the range of a 64-bit integer");
          }
          return value;
        }
        if (token == JsonToken.VALUE_NUMBER_FLOAT) {
          state.fieldError(
              "invalid_field_type",
              name + " must be an integer, not a number with a fraction or an exponent");
          skip(state, token);
          return null;
        }
        return wrongType(state, name + " must be an integer", token);
      case MAP:
        if (token == JsonToken.START_OBJECT) {
          return readMap(state);
        }
        return wrongType(state, name + " must be an object", token);
      case ARRAY_STRING:
        if (token == JsonToken.START_ARRAY) {
          List<String> list = new ArrayList<>();
          while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
            list.add(
                token == JsonToken.VALUE_NULL
                    ? null
                    : JsonText.text(parser, token, state.checkSurrogates));
          }
          return list;
        }
        return wrongType(state, name + " must be an array", token);
      case ARRAY_MAP:
        return readObjects(state, name, token, path -> readMap(state));
      case STRUCT:
        if (token == JsonToken.START_OBJECT) {
          return readStruct(state, children, name);
        }
        return wrongType(state, name + " must be an object", token);
      case ARRAY_STRUCT:
        return readObjects(state, name, token, path -> readStruct(state, children, path));
      default:
        throw new IllegalStateException(String.valueOf(kind));
    }
  }

  /**
   * A value of the wrong JSON type: the field error {@code invalid_field_type} ({@code <what>,
   * not <its type>}), the value skipped (still checked); the field reads NULL.
   */
  private static Object wrongType(State state, String what, JsonToken token)
      throws IOException, Failure {
    state.fieldError("invalid_field_type", what + ", not " + jsonType(token));
    skip(state, token);
    return null;
  }

  /** Reads the object whose START_OBJECT was just read; {@code path} names it in errors. */
  @FunctionalInterface
  private interface ObjectReader {
    Object read(String path) throws IOException, Failure;
  }

  /**
   * An array of objects ({@code array<map>} or {@code array<struct>}) starting at {@code token},
   * each object read by {@code element}; a null element is NULL, any other element a field error
   * naming it ({@code name[i] must be an object}).
   */
  private static List<Object> readObjects(
      State state, String name, JsonToken token, ObjectReader element)
      throws IOException, Failure {
    if (token != JsonToken.START_ARRAY) {
      wrongType(state, name + " must be an array of objects", token);
      return null;
    }
    List<Object> list = new ArrayList<>();
    int index = 0;
    while ((token = state.parser.nextToken()) != JsonToken.END_ARRAY) {
      String path = name + "[" + index + "]";
      if (token == JsonToken.START_OBJECT) {
        list.add(element.read(path));
      } else {
        if (token != JsonToken.VALUE_NULL) {
          wrongType(state, path + " must be an object", token);
        }
        list.add(null);
      }
      index++;
    }
    return list;
  }

  /** The object whose START_OBJECT was just read, values as {@link JsonText#text}. */
  private static Map<String, String> readMap(State state) throws IOException, Failure {
    JsonParser parser = state.parser;
    Map<String, String> map = new LinkedHashMap<>();
    JsonToken token;
    while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
      String key = parser.currentName();
      if (state.checkSurrogates) {
        Surrogates.check(key);
      }
      token = parser.nextToken();
      map.put(
          key,
          token == JsonToken.VALUE_NULL ? null : JsonText.text(parser, token, state.checkSurrogates));
    }
    return map;
  }
}
