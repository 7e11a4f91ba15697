{#
    Pieces of stg_debezium__events (docs/formats.md section 6) kept out of the model: where a
    change is in its source's log, and the Connect Decimal values of an image.
#}

{#
    debezium_position_problem(): NULL, or the struct(reason, detail) of a record whose log
    position cannot order it: PostgreSQL source.lsn not an integer; neither lsn nor MySQL
    source.file and source.pos (missing_required_field); a binlog file name without its number
    after the last '.', pos or row not an integer. Reads the columns is_tombstone,
    record_problem, payload, lsn_digits, binlog_file_digits, pos_digits and row_digits.
#}
{% macro debezium_position_problem() -%}
    case
        when is_tombstone or record_problem is not null then null
        when payload.source.lsn is not null and lsn_digits = '' then named_struct(
                'reason', 'invalid_field_type',
                'detail', 'payload.source.lsn must be a non-negative integer'
            )
        when payload.source.lsn is not null then null
        when payload.source.file is null or payload.source.pos is null then named_struct(
                'reason', 'missing_required_field',
                'detail', 'payload.source has neither lsn (PostgreSQL) nor file and pos '
                || '(MySQL): the change cannot be ordered'
            )
        when binlog_file_digits = '' then named_struct(
                'reason', 'invalid_field_value',
                'detail', concat(
                    'payload.source.file ', payload.source.file,
                    ' does not end in a binlog file number'
                )
            )
        when pos_digits = '' then named_struct(
                'reason', 'invalid_field_type',
                'detail', 'payload.source.pos must be a non-negative integer'
            )
        when payload.source.row is not null and row_digits = '' then named_struct(
                'reason', 'invalid_field_type',
                'detail', 'payload.source.row must be a non-negative integer'
            )
    end
{%- endmacro %}

{#
    debezium_decimal_image(image): the image (a map column -> value text) with the value of
    every column of logical type org.apache.kafka.connect.data.Decimal (decimal_scales: column
    -> its schema's scale) decoded from base64 of the unscaled integer to its plain text with
    exactly that many fraction digits (Java: cdc_lakehouse.formats.debezium.ConnectDecimal, any length).
    A value that is not base64 becomes NULL (the model's bad_decimals names it). The image as
    it is when the record has a problem or declares no decimal.
#}
{% macro debezium_decimal_image(image) -%}
    case
        when problem is null and size(decimal_fields) > 0 then transform_values(
                {{ image }},
                (col_name, col_value) -> case
                    {# the function gives '' for text that is not base64 #}
                    when map_contains_key(decimal_scales, col_name) and col_value is not null
                        then nullif(java_method(
                            'cdc_lakehouse.formats.debezium.ConnectDecimal', 'text', col_value,
                            decimal_scales[col_name]
                        ), '')
                    when map_contains_key(decimal_scales, col_name) then null
                    else col_value
                end
            )
        else {{ image }}
    end
{%- endmacro %}
