{#
    Epoch milliseconds sent as text (a JSON integer's exact text, or a string of digits, as the
    exact JSON function reads them), checked the way the Python decoders did
    (cdc_lakehouse.decode.shared.EPOCH_LIMITS): a time must lie in the years 1-9999, what a
    Spark timestamp holds, or timestamp_millis() would fail the build.
#}

{#
    integer_digits(field, signed=true): the digits of `field` (text) without the blanks
    around them, with a leading minus when signed; '' when `field` is not such a number, NULL
    when it is NULL. Cast it to bigint once epoch_ms_problem has found no problem.
#}
{% macro integer_digits(field, signed=true) -%}
    regexp_extract({{ field }}, '^\\s*({{ "-?" if signed else "" }}[0-9]+)\\s*$', 1)
{%- endmacro %}

{#
    epoch_ms_problem(field, path, signed=true, type_detail=none, digits=none): NULL, or the
    struct(reason, detail) of a `field` (text; NULL is no problem) that is not an integer
    (invalid_field_type, detail type_detail, default '<path> must be epoch milliseconds') or
    not epoch ms in the years 1-9999 (invalid_field_value, '<path> = <the integer> is not a
    time in the years 1-9999 (epoch ms)'). `path` names the field in the details (e.g.
    payload.timestamp.eventTime). `digits`: a column holding integer_digits(field, signed)
    already (computed once, read by the check and the cast).
#}
{% macro epoch_ms_problem(field, path, signed=true, type_detail=none, digits=none) -%}
    {% set digits = digits or integer_digits(field, signed) %}
    case
        when {{ field }} is null then null
        when {{ digits }} = ''
            then named_struct(
                'reason', 'invalid_field_type',
                'detail', '{{ type_detail or path ~ " must be epoch milliseconds" }}'
            )
        when coalesce(
                not try_cast({{ digits }} as bigint)
                between -62135596800000 and 253402300799999,
                true
            )
            then named_struct(
                'reason', 'invalid_field_value',
                'detail', concat(
                    '{{ path }} = ', regexp_replace({{ digits }}, '^(-?)0+(?=[0-9])', '$1'),
                    ' is not a time in the years 1-9999 (epoch ms)'
                )
            )
    end
{%- endmacro %}
