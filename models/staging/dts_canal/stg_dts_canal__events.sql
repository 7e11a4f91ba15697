{#
    DTS / open-source Canal JSON records decoded in one pass into the normalized vocabulary of
    docs/formats.md (section 4c, seed 003): every row of every message classified as a change,
    a DDL or a quarantined record, with its normalized op, key columns, images, row keys and
    ordering key. Canal has no heartbeats or transaction markers, so no control rows.

    - Decoding: the exact JSON function (macro exact_json, Java on Jackson's streaming parser)
      reads each Kafka value once into the message's fields with every value's text as sent
      (1.50 stays 1.50); structural errors (empty value, invalid UTF-8 or JSON, duplicate key,
      not an object, a field of the wrong JSON type) come back as a reason, never as a failure.
      es, ts and id: a JSON integer or a string of digits (es / ts epoch ms, years 1-9999).
    - Rows: one per element of data (of old when data is null or empty: a legacy DELETE),
      kafka_row_index = its index; one row for a DDL, row-less or undecodable message. data
      and old must align (same length) and hold objects, else invalid_field_type.
    - Images, open-source meaning (DTS instances from 2022-03-20): INSERT / INIT after = data;
      UPDATE after = data, before = data overlaid with old (old holds only the changed
      columns; a null in old means the old value was NULL, not "unchanged"); DELETE before =
      data. Legacy meaning (the registry's canal_legacy_swap, instances created before
      2022-03-20): old is the new row and data the old one; a DELETE carries its row in old.
    - type INSERT / UPDATE / DELETE / INIT -> insert / update / delete / snapshot (case-
      sensitive); isDdl (or a DDL type when isDdl is absent) -> ddl with ddl_text = sql and
      source_op = type; any other type -> quarantine unknown_op.
    - Key columns: pkNames; without them, every column of the row's image (all_columns).
    - If any row of a message is quarantined, the WHOLE message is one quarantine row
      (kafka_row_index 0, the first problem's reason): a message is applied completely or not
      at all, and silver.quarantine keeps one row per Kafka record.
    - Ordering key (text, fixed width up to the topic, compares like the tuple): es (ms) as 20
      digits, then 0 for a full-load INIT row / 1 for a change (snapshot first within the same
      millisecond; the vendor documents do not order INIT rows before changes otherwise, so es
      decides), then Kafka partition (10), offset (20), row index (10) and topic, dot-separated (macro
      kafka_ordering_tail). es is not unique: the changes of one row in the same millisecond are
      ordered by their Kafka position.

    A table, not a view: four silver models and its tests read it; as a view each of them would
    decode again.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run decodes
    the new batches only (a record of this format depends on no other record).
#}

{{ batch_partitioned_config() }}

{# why an image its op needs is missing (the detail of missing_required_field), of row r #}
{% set missing_image_detail %}
concat(
    type_code,
    ' without its ',
    case
        when op in ('insert', 'snapshot', 'update') and r.after_image is null then 'after'
        else 'before'
    end,
    ' image: ',
    case
        when canal_legacy_swap and op = 'update'
            then 'on a canal_legacy_swap topic an UPDATE needs data (the old '
            || 'row) and old (the new row)'
        when canal_legacy_swap then 'neither data nor old carries a row'
        when not r.has_data_row and r.has_old_row
            then 'data is null or empty and only old carries a row (a DTS '
            || 'instance created before 2022-03-20? set canal_legacy_swap for '
            || 'the topic in seeds/cdc_topics.csv)'
        else 'data is null or empty'
    end
)
{% endset %}
{# the checks of the whole message (macro quarantine_checks: the decoding's own verdict first) #}
{% set message_level_checks = [
    [
        'op_kind is null', 'unknown_op',
        "concat('type ', type_code, ' is not a Canal DML type (INSERT, UPDATE, DELETE, INIT) ', "
        ~ "'and isDdl is not true')",
    ],
    ['es_ms is null', 'missing_required_field', "'es is missing'"],
    [
        "op_kind = 'ddl' and coalesce(trim(sql_text), '') = ''", 'missing_required_field',
        "concat('DDL message (type ', type_code, ') without sql')",
    ],
    ["op_kind = 'ddl'", none, none],
    ['source_table is null', 'missing_required_field', "'table is missing'"],
] %}
{# the checks of each row r of a change message #}
{% set missing_key = missing_key_check(
    [['r.state_image', 'r.key_columns'], ['r.before_image', 'r.key_columns']]
) %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% set new_records = "source_format = 'dts_canal_json' and ingest_batch_id > " ~ held_batch %}
{% if is_incremental() and nothing_new_in([(ref('stg_bronze__kafka_records'), new_records)]) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

{# the Canal message fields (seed 003), each value's text exactly as sent #}
{% set decode_canal = exact_json(
    'cdc_dts_canal_json',
    'type string, isDdl boolean, database string, `table` string, pkNames array<string>, '
    ~ 'mysqlType map<string,string>, sqlType map<string,string>, es string, ts string, '
    ~ 'id string, gtid string, `sql` string, data array<map<string,string>>, '
    ~ 'old array<map<string,string>>'
) %}

with

bronze_records as (
    select
        source_format,
        coalesce(canal_legacy_swap, false) as canal_legacy_swap,
        topic,
        partition,
        offset,
        timestamp,
        value,
        ingest_batch_id
    from {{ ref('stg_bronze__kafka_records') }}
    where {{ new_records }}
),

{# one call of the function per record: its struct is expanded in the next CTE #}
parsed as (
    select
        * except (value),
        {{ decode_canal }}(value) as message
    from bronze_records
),

{# the message's fields; the digits of es and ts once (read by the checks and the casts) #}
fields as (
    select
        * except (message),
        message.*,
        {{ integer_digits('message.es', signed=false) }} as es_digits,
        {{ integer_digits('message.ts', signed=false) }} as ts_digits
    from parsed
),

{# what makes the whole message undecodable, first problem first (docs/formats.md 4c) #}
message_checks as (
    select
        *,
        coalesce(isddl, type in (
            'DDL', 'CREATE', 'ALTER', 'ERASE', 'QUERY', 'TRUNCATE', 'RENAME', 'CINDEX', 'DINDEX'
        )) as is_ddl,
        coalesce(
            case
                when decode_error is not null
                    then named_struct(
                        'reason', decode_error, 'detail', decode_error_detail
                    )
                when type is null then named_struct(
                    'reason', 'missing_required_field', 'detail', 'type is missing'
                )
            end,
            {{ epoch_ms_problem(
                'es', 'es', type_detail='es must be a non-negative integer', digits='es_digits'
            ) }},
            {{ epoch_ms_problem(
                'ts', 'ts', type_detail='ts must be a non-negative integer', digits='ts_digits'
            ) }},
            case
                when id is not null and not trim(id) rlike '^[0-9]+$' then named_struct(
                    'reason', 'invalid_field_type',
                    'detail', 'id must be a non-negative integer'
                )
            end
        ) as header_problem
    from fields
),

rows_checked as (
    select
        *,
        coalesce(
            header_problem,
            case when not is_ddl then coalesce(
                    {{ canal_row_element_problem('data') }},
                    {{ canal_row_element_problem('old') }},
                    case
                        when data is not null and old is not null and size(data) != size(old)
                            then named_struct(
                                'reason', 'invalid_field_type',
                                'detail', concat(
                                    'old is misaligned with data: ', cast(size(old) as string),
                                    ' old element(s) for ', cast(size(data) as string),
                                    ' data element(s), so no old element can be matched to its row'
                                )
                            )
                    end
                )
            end
        ) as message_decode_error
    from message_checks
),

{# the message's own columns, in the normalized vocabulary #}
message_fields as (
    select
        source_format,
        canal_legacy_swap,
        topic,
        partition,
        offset,
        timestamp,
        ingest_batch_id,
        data,
        old,
        message_decode_error.reason as decode_error,
        message_decode_error.detail as decode_error_detail,
        type as type_code,
        is_ddl,
        nullif(database, '') as source_database,
        nullif(`table`, '') as source_table,
        pknames as pk_names,
        mysqltype as column_types,
        case when message_decode_error is null then cast(es_digits as bigint) end as es_ms,
        case when message_decode_error is null then cast(ts_digits as bigint) end as ts_ms,
        regexp_replace(trim(id), '^0+(?=.)', '') as canal_id,
        nullif(gtid, '') as gtid,
        sql as sql_text,
        case
            when is_ddl then null
            when type = 'INSERT' then 'insert'
            when type = 'UPDATE' then 'update'
            when type = 'DELETE' then 'delete'
            when type = 'INIT' then 'snapshot'
        end as op,
        case
            when is_ddl then 'ddl'
            when type in ('INSERT', 'UPDATE', 'DELETE', 'INIT') then 'change'
        end as op_kind,
        case when type = 'INIT' then 0 else 1 end as snapshot_rank,
        case
            when is_ddl then null
            when size(pknames) > 0 then 'primary_key'
            else 'all_columns'
        end as key_source
    from rows_checked
),

{#
    the rows of each message, as an array: the elements (data[i], old[i]) and the images
    (docs/formats.md 4c), open-source meaning or legacy (data / old swapped); a DDL, row-less
    or undecodable message has one row without elements. Each message's rows are checked
    here, before the explode, so that no shuffle gathers them again. Neither data / old nor
    the arrays are named after the explode: Spark then leaves them out of the exploded rows,
    where a 10,000-row message of 400 KB would be copied into each of its rows.
#}
message_rows as (
    select
        * except (data, old),
        transform(
            case
                when decode_error is not null or is_ddl
                    then array(named_struct('data_row', null, 'old_row', null))
                else transform(
                        sequence(
                            0, greatest(coalesce(size(data), 0), coalesce(size(old), 0), 1) - 1
                        ),
                        i -> named_struct('data_row', get(data, i), 'old_row', get(old, i))
                    )
            end,
            element -> named_struct(
                'has_data_row', element.data_row is not null,
                'has_old_row', element.old_row is not null,
                'before_image', {{ canal_before_image('element.data_row', 'element.old_row') }},
                'after_image', {{ canal_after_image('element.data_row', 'element.old_row') }}
            )
        ) as row_images
    from message_fields
),

{# the image that says which row each row is about, and its key columns #}
keyed_rows as (
    select
        * except (row_images),
        transform(
            row_images,
            r -> named_struct(
                'has_data_row', r.has_data_row,
                'has_old_row', r.has_old_row,
                'before_image', r.before_image,
                'after_image', r.after_image,
                'state_image', {{ canal_state_image('r') }},
                'key_columns', case
                    when is_ddl then null
                    when size(pk_names) > 0 then pk_names
                    else array_sort(map_keys({{ canal_state_image('r') }}))
                end
            )
        ) as message_rows
    from message_rows
),

{# the verdict of the whole message #}
message_verdicts as (
    select
        *,
        {{ quarantine_checks(message_level_checks) }}
    from keyed_rows
),

{#
    the first problem of the message: its own (then row 0), else that of its lowest row; a
    message with a problem is quarantined whole
#}
checked as (
    select
        * except (quarantine_reason, quarantine_detail),
        case
            when quarantine_reason is not null
                then named_struct(
                    'row_index', 0, 'reason', quarantine_reason, 'detail', quarantine_detail
                )
            when op_kind = 'change'
                then get(filter(
                    transform(
                        message_rows,
                        (r, i) -> case
                            when
                                (op in ('insert', 'snapshot', 'update') and r.after_image is null)
                                or (op in ('delete', 'update') and r.before_image is null)
                                then named_struct(
                                    'row_index', i,
                                    'reason', 'missing_required_field',
                                    'detail', {{ missing_image_detail }}
                                )
                            when {{ missing_key[0] }} then named_struct(
                                'row_index', i,
                                'reason', '{{ missing_key[1] }}',
                                'detail', {{ missing_key[2] }}
                            )
                        end
                    ),
                    problem -> problem is not null
                ), 0)
        end as message_problem
    from message_verdicts
),

{# one row per row of the message; a quarantined message is one row, its first row's #}
exploded as (
    select
        * except (message_rows, kept_rows, message_row),
        message_row.*
    from (
        select
            *,
            size(message_rows) as row_count,
            case
                when message_problem is null then message_rows else slice(message_rows, 1, 1)
            end as kept_rows
        from checked
    ) as counted
        lateral view posexplode(kept_rows) as row_index, message_row
),

normalized as (
    select
        * except (op),
        case when message_problem is null then op end as op,
        message_problem.reason as quarantine_reason,
        case
            when message_problem is null then null
            when row_count > 1
                then concat(
                    'row ', cast(message_problem.row_index as string), ' of ',
                    cast(row_count as string), ': ', message_problem.detail,
                    ' (the whole message is quarantined)'
                )
            else message_problem.detail
        end as quarantine_detail,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        {{ format_ordering_key(
            'dts_canal', {'es_ms': 'es_ms', 'snapshot_rank': 'snapshot_rank'}, row_index='row_index'
        ) }} as ordering_key,
        case when is_ddl then sql_text end as ddl_text
    from exploded
),

final as (
    select
        {{ staging_event_row(
            [
                'quarantine_reason', 'quarantine_detail', 'op', 'source_database',
                'source_table', 'key_source', 'key_columns', 'column_types', 'before_image',
                'after_image', 'row_key', 'before_row_key', 'ordering_key', 'ddl_text',
            ],
            renamed={
                'kafka_row_index': 'row_index',
                'source_op': 'type_code',
                'event_time': 'timestamp_millis(es_ms)',
                'capture_time': 'timestamp_millis(ts_ms)',
                'source_sequence_id': 'canal_id',
                'source_position': 'gtid',
                'transaction_id': 'gtid',
            },
        ) }}
    from normalized
)

{% endif %}

select * from final
