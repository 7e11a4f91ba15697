{#
    exact_json(name, schema_ddl): the name of a Spark SQL function that decodes one JSON
    object (a Kafka value, binary UTF-8) into a struct of the fields schema_ddl declares
    (Spark DDL: string, boolean, bigint, map<string,string>, array<string>,
    array<map<string,string>>, struct<...> and array<struct<...>> of these, nested), every
    value with its exact text as sent (1.50 stays 1.50; from_json would give 1.5), followed by
    decode_error and decode_error_detail (a reason code and what is wrong where; then every
    field is NULL). It never fails on a message. The function is
    Java on Jackson's streaming parser (jvm/exact-json, cdc_lakehouse.decode.exact_json), registered in
    the build's session when the model is compiled (the adapter's register_exact_json).

    Select the struct once and expand it in an outer query: `name(value).*` in one select
    calls the function once per field.
#}
{% macro exact_json(name, schema_ddl) %}
    {% if execute %}
        {% do adapter.register_exact_json(name, schema_ddl) %}
    {% endif %}
    {{ return(name) }}
{% endmacro %}
