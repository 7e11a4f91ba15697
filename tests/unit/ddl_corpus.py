"""A corpus of real-world-style source DDL with the expected :func:`cdc_lakehouse.ddl.translate`
result, per dialect (MySQL, Oracle, PostgreSQL, SQL Server) plus bad input.

Statements are written the way the sources and their tools emit them: MySQL binlog / ``SHOW
CREATE TABLE`` text with backquotes, charsets and ``ENGINE=InnoDB``; Oracle ``DBMS_METADATA``
output with quoted upper-case names and ``NOT NULL ENABLE``; PostgreSQL ``pg_dump`` style
(``ALTER TABLE ONLY``, ``character varying``); SQL Server SSMS scripts (``[dbo].[t]``,
``ON [PRIMARY]``, ``sp_rename``). Each :class:`Case` lists the expected changes in order: kind,
table, column, new name, Spark type, the exact Spark SQL and the status (and, where it matters,
the ``create_table`` columns and a piece of the reason).
"""

from __future__ import annotations

from dataclasses import dataclass

TRANSLATED = "translated"
UNPARSEABLE = "unparseable"
NO_SPARK = "no_spark_equivalent"
NO_INDEXES = "Spark tables have no indexes or constraints"


@dataclass(frozen=True)
class Expected:
    """One expected :class:`~cdc_lakehouse.ddl.SchemaChange` (``reason_contains``: a piece of the
    reason, ``None``: not checked)."""

    kind: str
    table: str | None
    column: str | None = None
    new_name: str | None = None
    new_spark_type: str | None = None
    spark_sql: str | None = None
    status: str = TRANSLATED
    columns: tuple[tuple[str, str], ...] = ()
    reason_contains: str | None = None


@dataclass(frozen=True)
class Case:
    """A DDL text in a dialect and the changes it must give."""

    id: str
    dialect: str | None
    ddl: str | None
    expected: tuple[Expected, ...]


def add(table: str, column: str, spark_type: str, sql: str, reason: str | None = None) -> Expected:
    return Expected("add_column", table, column, None, spark_type, sql, reason_contains=reason)


def retype(
    table: str, column: str, spark_type: str, sql: str, reason: str | None = None
) -> Expected:
    return Expected(
        "change_column_type", table, column, None, spark_type, sql, reason_contains=reason
    )


def drop_col(table: str, column: str, sql: str) -> Expected:
    return Expected("drop_column", table, column, spark_sql=sql)


def rename_col(table: str, old: str, new: str, sql: str) -> Expected:
    return Expected("rename_column", table, old, new, spark_sql=sql)


def rename_tab(table: str, new: str, sql: str) -> Expected:
    return Expected("rename_table", table, new_name=new, spark_sql=sql)


def index(table: str | None) -> Expected:
    return Expected("index", table, status=NO_SPARK, reason_contains=NO_INDEXES)


def other(table: str | None, reason: str, column: str | None = None) -> Expected:
    return Expected("other", table, column, status=NO_SPARK, reason_contains=reason)


def bad(reason: str, kind: str = "other", table: str | None = None) -> Expected:
    return Expected(kind, table, status=UNPARSEABLE, reason_contains=reason)


MYSQL_ORDERS_DDL = """CREATE TABLE `shop`.`orders` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT COMMENT 'order id',
  `order_no` varchar(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  `user_id` int(11) NOT NULL,
  `amount` decimal(12,2) NOT NULL DEFAULT '0.00',
  `status` enum('new','paid','shipped') NOT NULL DEFAULT 'new',
  `is_gift` tinyint(1) NOT NULL DEFAULT '0',
  `extra` json DEFAULT NULL,
  `memo` text,
  `attachment` blob,
  `deleted` bit(1) NOT NULL DEFAULT b'0',
  `created_at` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,
  `updated_at` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_order_no` (`order_no`),
  KEY `idx_user_id` (`user_id`)
) ENGINE=InnoDB AUTO_INCREMENT=1001 DEFAULT CHARSET=utf8mb4 COMMENT='customer orders'"""

ORACLE_DEPT_HIST_DDL = """CREATE TABLE "SCOTT"."DEPT_HIST"
   (\t"DEPTNO" NUMBER(2,0) NOT NULL ENABLE,
\t"DNAME" VARCHAR2(14 BYTE),
\t"LOC" VARCHAR2(13 BYTE) DEFAULT 'NEW YORK',
\t"CHANGED" DATE DEFAULT SYSDATE NOT NULL ENABLE,
\t CONSTRAINT "PK_DEPT_HIST" PRIMARY KEY ("DEPTNO")
  USING INDEX PCTFREE 10 INITRANS 2 MAXTRANS 255 TABLESPACE "USERS"  ENABLE
   ) SEGMENT CREATION IMMEDIATE
  PCTFREE 10 PCTUSED 40 INITRANS 1 MAXTRANS 255 NOCOMPRESS LOGGING
  TABLESPACE "USERS\""""

SQLSERVER_CUSTOMERS_DDL = """CREATE TABLE [dbo].[Customers](
\t[CustomerId] [int] IDENTITY(1,1) NOT NULL,
\t[Name] [nvarchar](max) NULL,
\t[Balance] [money] NOT NULL,
\t[Active] [bit] NOT NULL,
\t[RowGuid] [uniqueidentifier] ROWGUIDCOL NOT NULL,
\t[CreatedAt] [datetime2](7) NOT NULL,
 CONSTRAINT [PK_Customers] PRIMARY KEY CLUSTERED
(
\t[CustomerId] ASC
)WITH (PAD_INDEX = OFF, STATISTICS_NORECOMPUTE = OFF, IGNORE_DUP_KEY = OFF) ON [PRIMARY]
) ON [PRIMARY] TEXTIMAGE_ON [PRIMARY]"""

MYSQL_CASES = (
    Case(
        "mysql_add_after_comment_charset",
        "mysql",
        "ALTER TABLE `shop`.`orders` ADD COLUMN `buyer_note` varchar(255) CHARACTER SET utf8mb4 "
        "COLLATE utf8mb4_general_ci DEFAULT NULL COMMENT 'note left by the buyer' AFTER `status`",
        (
            add(
                "shop.orders",
                "buyer_note",
                "string",
                "ALTER TABLE shop.orders ADD COLUMNS "
                "(buyer_note STRING COMMENT 'note left by the buyer' AFTER status)",
                "DEFAULT NULL",
            ),
        ),
    ),
    Case(
        "mysql_add_first_unsigned",
        "MySQL",
        "ALTER TABLE `orders` ADD COLUMN `row_id` bigint(20) unsigned NOT NULL AUTO_INCREMENT "
        "FIRST",
        (
            add(
                "orders",
                "row_id",
                "decimal(20,0)",
                "ALTER TABLE orders ADD COLUMNS (row_id DECIMAL(20,0) FIRST)",
                "NOT NULL",
            ),
        ),
    ),
    Case(
        "mysql_multi_clause",
        "mysql",
        "ALTER TABLE t ADD a INT, DROP COLUMN b, MODIFY c BIGINT",
        (
            add("t", "a", "int", "ALTER TABLE t ADD COLUMNS (a INT)"),
            drop_col("t", "b", "ALTER TABLE t DROP COLUMN b"),
            retype("t", "c", "bigint", "ALTER TABLE t ALTER COLUMN c TYPE BIGINT"),
        ),
    ),
    Case(
        "mysql_modify",
        "mysql",
        "ALTER TABLE `shop`.`orders` MODIFY COLUMN `amount` decimal(14,4) NOT NULL "
        "DEFAULT '0.0000' COMMENT 'order amount'",
        (
            retype(
                "shop.orders",
                "amount",
                "decimal(14,4)",
                "ALTER TABLE shop.orders ALTER COLUMN amount TYPE DECIMAL(14,4)",
                "COMMENT not applied",
            ),
        ),
    ),
    Case(
        "mysql_change_rename",
        "mariadb",
        "ALTER TABLE `shop`.`orders` CHANGE COLUMN `addr` `shipping_address` varchar(512) "
        "CHARACTER SET utf8mb4 NOT NULL DEFAULT '' COMMENT 'ship to' AFTER `user_id`",
        (
            rename_col(
                "shop.orders",
                "addr",
                "shipping_address",
                "ALTER TABLE shop.orders RENAME COLUMN addr TO shipping_address",
            ),
            retype(
                "shop.orders",
                "shipping_address",
                "string",
                "ALTER TABLE shop.orders ALTER COLUMN shipping_address TYPE STRING",
            ),
        ),
    ),
    Case(
        "mysql_change_same_name",
        "mysql",
        "ALTER TABLE orders CHANGE `qty` `qty` int(10) unsigned NOT NULL DEFAULT '0'",
        (retype("orders", "qty", "bigint", "ALTER TABLE orders ALTER COLUMN qty TYPE BIGINT"),),
    ),
    Case(
        "mysql_rename_table_pairs",
        "mysql",
        "RENAME TABLE `shop`.`orders` TO `shop`.`orders_2023`, "
        "`shop`.`orders_new` TO `shop`.`orders`",
        (
            rename_tab(
                "shop.orders",
                "shop.orders_2023",
                "ALTER TABLE shop.orders RENAME TO shop.orders_2023",
            ),
            rename_tab(
                "shop.orders_new",
                "shop.orders",
                "ALTER TABLE shop.orders_new RENAME TO shop.orders",
            ),
        ),
    ),
    Case(
        "mysql_alter_rename",
        "polardb",
        "ALTER TABLE shop.orders RENAME TO shop.orders_archive",
        (
            rename_tab(
                "shop.orders",
                "shop.orders_archive",
                "ALTER TABLE shop.orders RENAME TO shop.orders_archive",
            ),
        ),
    ),
    Case(
        "mysql_truncate",
        "mysql",
        "TRUNCATE TABLE `shop`.`order_items`",
        (Expected("truncate", "shop.order_items", spark_sql="TRUNCATE TABLE shop.order_items"),),
    ),
    Case(
        "mysql_drop_if_exists",
        "mysql",
        "DROP TABLE IF EXISTS `shop`.`tmp_orders`, `shop`.`tmp_items`",
        (
            Expected(
                "drop_table", "shop.tmp_orders", spark_sql="DROP TABLE IF EXISTS shop.tmp_orders"
            ),
            Expected(
                "drop_table", "shop.tmp_items", spark_sql="DROP TABLE IF EXISTS shop.tmp_items"
            ),
        ),
    ),
    Case(
        "mysql_create_table",
        "mysql",
        MYSQL_ORDERS_DDL,
        (
            Expected(
                "create_table",
                "shop.orders",
                spark_sql="CREATE TABLE shop.orders (id DECIMAL(20,0) COMMENT 'order id', "
                "order_no STRING, user_id INT, amount DECIMAL(12,2), status STRING, "
                "is_gift TINYINT, extra STRING, memo STRING, attachment BINARY, "
                "deleted BOOLEAN, created_at TIMESTAMP, updated_at TIMESTAMP) "
                "COMMENT 'customer orders'",
                columns=(
                    ("id", "decimal(20,0)"),
                    ("order_no", "string"),
                    ("user_id", "int"),
                    ("amount", "decimal(12,2)"),
                    ("status", "string"),
                    ("is_gift", "tinyint"),
                    ("extra", "string"),
                    ("memo", "string"),
                    ("attachment", "binary"),
                    ("deleted", "boolean"),
                    ("created_at", "timestamp"),
                    ("updated_at", "timestamp"),
                ),
                reason_contains="PRIMARY KEY, indexes and constraints dropped",
            ),
        ),
    ),
    Case(
        "mysql_add_index",
        "mysql",
        "ALTER TABLE `shop`.`orders` ADD INDEX `idx_user_created` (`user_id`, `created_at`)",
        (index("shop.orders"),),
    ),
    Case(
        "mysql_create_unique_index",
        "mysql",
        "CREATE UNIQUE INDEX uk_order_no ON shop.orders (order_no)",
        (index("shop.orders"),),
    ),
    Case(
        "mysql_create_prefix_index",
        "mysql",
        "CREATE INDEX idx_title ON shop.products (title(32)) USING BTREE",
        (index("shop.products"),),
    ),
    Case(
        "mysql_drop_index",
        "mysql",
        "DROP INDEX `idx_user_created` ON `shop`.`orders`",
        (index("shop.orders"),),
    ),
    Case(
        "mysql_unsigned_ints",
        "mysql",
        "ALTER TABLE `stats` ADD `views` int unsigned NOT NULL DEFAULT '0', "
        "ADD `flags` tinyint unsigned, ADD `rank` smallint unsigned, "
        "ADD `total` bigint(20) unsigned, ADD `is_active` tinyint(1) NOT NULL DEFAULT '1', "
        "ADD `hits` mediumint(8) unsigned",
        (
            add("stats", "views", "bigint", "ALTER TABLE stats ADD COLUMNS (views BIGINT)"),
            add("stats", "flags", "smallint", "ALTER TABLE stats ADD COLUMNS (flags SMALLINT)"),
            add("stats", "rank", "int", "ALTER TABLE stats ADD COLUMNS (rank INT)"),
            add(
                "stats",
                "total",
                "decimal(20,0)",
                "ALTER TABLE stats ADD COLUMNS (total DECIMAL(20,0))",
            ),
            add(
                "stats", "is_active", "tinyint", "ALTER TABLE stats ADD COLUMNS (is_active TINYINT)"
            ),
            add("stats", "hits", "int", "ALTER TABLE stats ADD COLUMNS (hits INT)"),
        ),
    ),
    Case(
        "mysql_types",
        "mysql",
        "ALTER TABLE t ADD COLUMN price decimal(10,2), ADD COLUMN huge decimal(65,30), "
        "ADD COLUMN plain_dec decimal, ADD COLUMN ratio float, ADD COLUMN score double, "
        "ADD COLUMN born date, ADD COLUMN opened time(3), ADD COLUMN yr year, "
        "ADD COLUMN payload longblob, ADD COLUMN mask bit(8), ADD COLUMN meta json, "
        "ADD COLUMN code char(4), ADD COLUMN body longtext, ADD COLUMN digest varbinary(32), "
        "ADD COLUMN seen_at datetime(6), ADD COLUMN real_num real",
        (
            add("t", "price", "decimal(10,2)", "ALTER TABLE t ADD COLUMNS (price DECIMAL(10,2))"),
            add("t", "huge", "string", "ALTER TABLE t ADD COLUMNS (huge STRING)", "exceeds Spark"),
            add(
                "t",
                "plain_dec",
                "decimal(10,0)",
                "ALTER TABLE t ADD COLUMNS (plain_dec DECIMAL(10,0))",
            ),
            add("t", "ratio", "float", "ALTER TABLE t ADD COLUMNS (ratio FLOAT)"),
            add("t", "score", "double", "ALTER TABLE t ADD COLUMNS (score DOUBLE)"),
            add("t", "born", "date", "ALTER TABLE t ADD COLUMNS (born DATE)"),
            add("t", "opened", "string", "ALTER TABLE t ADD COLUMNS (opened STRING)"),
            add("t", "yr", "int", "ALTER TABLE t ADD COLUMNS (yr INT)"),
            add("t", "payload", "binary", "ALTER TABLE t ADD COLUMNS (payload BINARY)"),
            add("t", "mask", "bigint", "ALTER TABLE t ADD COLUMNS (mask BIGINT)"),
            add("t", "meta", "string", "ALTER TABLE t ADD COLUMNS (meta STRING)"),
            add("t", "code", "string", "ALTER TABLE t ADD COLUMNS (code STRING)"),
            add("t", "body", "string", "ALTER TABLE t ADD COLUMNS (body STRING)"),
            add("t", "digest", "binary", "ALTER TABLE t ADD COLUMNS (digest BINARY)"),
            add("t", "seen_at", "timestamp", "ALTER TABLE t ADD COLUMNS (seen_at TIMESTAMP)"),
            add("t", "real_num", "double", "ALTER TABLE t ADD COLUMNS (real_num DOUBLE)"),
        ),
    ),
    Case(
        "mysql_pk_swap",
        "mysql",
        "ALTER TABLE `t` DROP PRIMARY KEY, ADD PRIMARY KEY (`id`, `tenant_id`)",
        (index("t"), index("t")),
    ),
    Case(
        "mysql_add_column_list",
        "mysql",
        "ALTER TABLE `t` ADD COLUMN (`a` int(11) DEFAULT NULL, `b` varchar(10) NOT NULL)",
        (
            add("t", "a", "int", "ALTER TABLE t ADD COLUMNS (a INT)", "DEFAULT NULL"),
            add("t", "b", "string", "ALTER TABLE t ADD COLUMNS (b STRING)", "NOT NULL"),
        ),
    ),
    Case(
        "mysql_reserved_columns_and_quote_in_comment",
        "mysql",
        "ALTER TABLE `t` ADD COLUMN `order` int COMMENT 'buyer''s sort order', "
        "ADD COLUMN `select` varchar(8)",
        (
            add(
                "t",
                "order",
                "int",
                "ALTER TABLE t ADD COLUMNS (`order` INT COMMENT 'buyer\\'s sort order')",
            ),
            add("t", "select", "string", "ALTER TABLE t ADD COLUMNS (`select` STRING)"),
        ),
    ),
    Case(
        "mysql_two_statements",
        "mysql",
        "ALTER TABLE a ADD x int;\nDROP TABLE b;",
        (
            add("a", "x", "int", "ALTER TABLE a ADD COLUMNS (x INT)"),
            Expected("drop_table", "b", spark_sql="DROP TABLE b"),
        ),
    ),
    Case(
        "mysql_drop_column_if_exists",
        "mysql",
        "ALTER TABLE orders DROP COLUMN IF EXISTS legacy",
        (drop_col("orders", "legacy", "ALTER TABLE orders DROP COLUMN IF EXISTS legacy"),),
    ),
    Case("mysql_engine_only", "mysql", "ALTER TABLE `t` ENGINE=InnoDB", (other("t", "ENGINE"),)),
    Case(
        "mysql_partition",
        "mysql",
        "ALTER TABLE `logs` ADD PARTITION "
        "(PARTITION p202401 VALUES LESS THAN (TO_DAYS('2024-02-01')))",
        (other("logs", "partition maintenance"),),
    ),
    Case(
        "mysql_grant",
        "mysql",
        "GRANT SELECT, INSERT ON shop.* TO 'app'@'%'",
        (other(None, "GRANT"),),
    ),
    Case(
        "mysql_create_view",
        "mysql",
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `v_orders` AS "
        "select `id` from `orders`",
        (other(None, "VIEW"),),
    ),
    Case(
        "mysql_procedure",
        "mysql",
        "CREATE DEFINER=`root`@`localhost` PROCEDURE `p_cleanup`() "
        "BEGIN DELETE FROM t WHERE id < 10; END",
        (other(None, "CREATE PROCEDURE"),),
    ),
    Case(
        "mysql_dml",
        "mysql",
        "INSERT INTO shop.orders (id) VALUES (1)",
        (other(None, "INSERT"),),
    ),
)

ORACLE_CASES = (
    Case(
        "oracle_add_list",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" ADD ("BONUS" NUMBER(10,2), "NOTE" VARCHAR2(200 BYTE), '
        '"HIRED_AT" DATE)',
        (
            add(
                "SCOTT.EMP",
                "BONUS",
                "decimal(10,2)",
                "ALTER TABLE SCOTT.EMP ADD COLUMNS (BONUS DECIMAL(10,2))",
            ),
            add("SCOTT.EMP", "NOTE", "string", "ALTER TABLE SCOTT.EMP ADD COLUMNS (NOTE STRING)"),
            add(
                "SCOTT.EMP",
                "HIRED_AT",
                "timestamp",
                "ALTER TABLE SCOTT.EMP ADD COLUMNS (HIRED_AT TIMESTAMP)",
            ),
        ),
    ),
    Case(
        "oracle_modify_list",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" MODIFY ("SAL" NUMBER(12,2), "ENAME" VARCHAR2(50) NOT NULL)',
        (
            retype(
                "SCOTT.EMP",
                "SAL",
                "decimal(12,2)",
                "ALTER TABLE SCOTT.EMP ALTER COLUMN SAL TYPE DECIMAL(12,2)",
            ),
            retype(
                "SCOTT.EMP",
                "ENAME",
                "string",
                "ALTER TABLE SCOTT.EMP ALTER COLUMN ENAME TYPE STRING",
                "NOT NULL",
            ),
        ),
    ),
    Case(
        "oracle_modify_one",
        "oracle",
        "ALTER TABLE scott.emp MODIFY (sal NUMBER(12))",
        (
            retype(
                "scott.emp",
                "sal",
                "decimal(12,0)",
                "ALTER TABLE scott.emp ALTER COLUMN sal TYPE DECIMAL(12,0)",
            ),
        ),
    ),
    Case(
        "oracle_modify_without_parentheses",
        "oracle",
        "ALTER TABLE scott.emp MODIFY comm NUMBER(7,2) DEFAULT 0",
        (
            retype(
                "scott.emp",
                "comm",
                "decimal(7,2)",
                "ALTER TABLE scott.emp ALTER COLUMN comm TYPE DECIMAL(7,2)",
                "DEFAULT 0",
            ),
        ),
    ),
    Case(
        "oracle_modify_nullability_only",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" MODIFY ("ENAME" NOT NULL ENABLE)',
        (other("SCOTT.EMP", "nullability", "ENAME"),),
    ),
    Case(
        "oracle_drop_column",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" DROP COLUMN "COMM"',
        (drop_col("SCOTT.EMP", "COMM", "ALTER TABLE SCOTT.EMP DROP COLUMN COMM"),),
    ),
    Case(
        "oracle_drop_list",
        "oracle",
        "ALTER TABLE scott.emp DROP (comm, mgr)",
        (
            drop_col("scott.emp", "comm", "ALTER TABLE scott.emp DROP COLUMN comm"),
            drop_col("scott.emp", "mgr", "ALTER TABLE scott.emp DROP COLUMN mgr"),
        ),
    ),
    Case(
        "oracle_rename_column",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" RENAME COLUMN "SAL" TO "SALARY"',
        (
            rename_col(
                "SCOTT.EMP", "SAL", "SALARY", "ALTER TABLE SCOTT.EMP RENAME COLUMN SAL TO SALARY"
            ),
        ),
    ),
    Case(
        "oracle_rename",
        "oracle",
        "RENAME emp TO emp_hist",
        (rename_tab("emp", "emp_hist", "ALTER TABLE emp RENAME TO emp_hist"),),
    ),
    Case(
        "oracle_types",
        "Oracle",
        "ALTER TABLE scott.emp ADD (score NUMBER, ratio BINARY_DOUBLE, weight BINARY_FLOAT, "
        "amount FLOAT, doc CLOB, raw_id RAW(16), pic BLOB, ts TIMESTAMP(6), n INTEGER, "
        "nm NVARCHAR2(30), flag CHAR(1), notes LONG)",
        (
            add(
                "scott.emp",
                "score",
                "decimal(38,10)",
                "ALTER TABLE scott.emp ADD COLUMNS (score DECIMAL(38,10))",
                "decimal(38,10)",
            ),
            add("scott.emp", "ratio", "double", "ALTER TABLE scott.emp ADD COLUMNS (ratio DOUBLE)"),
            add("scott.emp", "weight", "float", "ALTER TABLE scott.emp ADD COLUMNS (weight FLOAT)"),
            add(
                "scott.emp", "amount", "double", "ALTER TABLE scott.emp ADD COLUMNS (amount DOUBLE)"
            ),
            add("scott.emp", "doc", "string", "ALTER TABLE scott.emp ADD COLUMNS (doc STRING)"),
            add(
                "scott.emp", "raw_id", "binary", "ALTER TABLE scott.emp ADD COLUMNS (raw_id BINARY)"
            ),
            add("scott.emp", "pic", "binary", "ALTER TABLE scott.emp ADD COLUMNS (pic BINARY)"),
            add("scott.emp", "ts", "timestamp", "ALTER TABLE scott.emp ADD COLUMNS (ts TIMESTAMP)"),
            add(
                "scott.emp",
                "n",
                "decimal(38,0)",
                "ALTER TABLE scott.emp ADD COLUMNS (n DECIMAL(38,0))",
            ),
            add("scott.emp", "nm", "string", "ALTER TABLE scott.emp ADD COLUMNS (nm STRING)"),
            add("scott.emp", "flag", "string", "ALTER TABLE scott.emp ADD COLUMNS (flag STRING)"),
            add("scott.emp", "notes", "string", "ALTER TABLE scott.emp ADD COLUMNS (notes STRING)"),
        ),
    ),
    Case(
        "oracle_create_dbms_metadata",
        "oracle",
        ORACLE_DEPT_HIST_DDL,
        (
            Expected(
                "create_table",
                "SCOTT.DEPT_HIST",
                spark_sql="CREATE TABLE SCOTT.DEPT_HIST "
                "(DEPTNO DECIMAL(2,0), DNAME STRING, LOC STRING, CHANGED TIMESTAMP)",
                columns=(
                    ("DEPTNO", "decimal(2,0)"),
                    ("DNAME", "string"),
                    ("LOC", "string"),
                    ("CHANGED", "timestamp"),
                ),
                reason_contains="vendor options",
            ),
        ),
    ),
    Case(
        "oracle_create_index",
        "oracle",
        'CREATE INDEX "SCOTT"."IDX_EMP_DEPT" ON "SCOTT"."EMP" ("DEPTNO") TABLESPACE "USERS"',
        (index("SCOTT.EMP"),),
    ),
    Case(
        "oracle_add_primary_key",
        "oracle",
        'ALTER TABLE "SCOTT"."EMP" ADD CONSTRAINT "PK_EMP" PRIMARY KEY ("EMPNO") ENABLE',
        (index("SCOTT.EMP"),),
    ),
    Case(
        "oracle_truncate",
        "oracle",
        'TRUNCATE TABLE "SCOTT"."EMP"',
        (Expected("truncate", "SCOTT.EMP", spark_sql="TRUNCATE TABLE SCOTT.EMP"),),
    ),
    Case(
        "oracle_comment_on_column",
        "oracle",
        'COMMENT ON COLUMN "SCOTT"."EMP"."SAL" IS \'monthly salary\'',
        (other("SCOTT.EMP", "COMMENT ON COLUMN", "SAL"),),
    ),
    Case(
        "oracle_grant",
        "oracle",
        "GRANT SELECT ON scott.emp TO reporting",
        (other(None, "GRANT"),),
    ),
    Case(
        "oracle_drop_purge",
        "oracle",
        'DROP TABLE "SCOTT"."EMP_OLD" CASCADE CONSTRAINTS PURGE',
        (Expected("drop_table", "SCOTT.EMP_OLD", spark_sql="DROP TABLE SCOTT.EMP_OLD"),),
    ),
)

POSTGRES_CASES = (
    Case(
        "postgres_alter_type_using",
        "postgres",
        "ALTER TABLE public.orders ALTER COLUMN amount TYPE numeric(14,2) "
        "USING amount::numeric(14,2)",
        (
            retype(
                "public.orders",
                "amount",
                "decimal(14,2)",
                "ALTER TABLE public.orders ALTER COLUMN amount TYPE DECIMAL(14,2)",
                "USING",
            ),
        ),
    ),
    Case(
        "postgres_set_data_type",
        "postgresql",
        'ALTER TABLE "public"."orders" ALTER COLUMN "qty" SET DATA TYPE bigint',
        (
            retype(
                "public.orders",
                "qty",
                "bigint",
                "ALTER TABLE public.orders ALTER COLUMN qty TYPE BIGINT",
            ),
        ),
    ),
    Case(
        "postgres_rename_column",
        "postgres",
        "ALTER TABLE public.orders RENAME COLUMN note TO buyer_note",
        (
            rename_col(
                "public.orders",
                "note",
                "buyer_note",
                "ALTER TABLE public.orders RENAME COLUMN note TO buyer_note",
            ),
        ),
    ),
    Case(
        "postgres_rename_without_column_keyword",
        "postgres",
        "ALTER TABLE public.orders RENAME note TO remark",
        (
            rename_col(
                "public.orders",
                "note",
                "remark",
                "ALTER TABLE public.orders RENAME COLUMN note TO remark",
            ),
        ),
    ),
    Case(
        "postgres_add_if_not_exists",
        "postgres",
        "ALTER TABLE public.orders ADD COLUMN IF NOT EXISTS coupon_code character varying(255)",
        (
            add(
                "public.orders",
                "coupon_code",
                "string",
                "ALTER TABLE public.orders ADD COLUMNS (coupon_code STRING)",
                "IF NOT EXISTS",
            ),
        ),
    ),
    Case(
        "postgres_rename_to",
        "postgres",
        "ALTER TABLE public.orders RENAME TO orders_2023",
        (
            rename_tab(
                "public.orders", "orders_2023", "ALTER TABLE public.orders RENAME TO orders_2023"
            ),
        ),
    ),
    Case(
        "postgres_create",
        "PostgreSQL",
        "CREATE TABLE IF NOT EXISTS sales.customers (id bigserial PRIMARY KEY, "
        "email character varying(255) NOT NULL UNIQUE, "
        "created_at timestamptz NOT NULL DEFAULT now(), balance numeric(12,2) DEFAULT 0, "
        "active bool DEFAULT true, tags jsonb, avatar bytea, score real, "
        "ratio double precision, external_id uuid, visits int4, small int2, total int8, "
        "name text)",
        (
            Expected(
                "create_table",
                "sales.customers",
                spark_sql="CREATE TABLE IF NOT EXISTS sales.customers (id BIGINT, email STRING, "
                "created_at TIMESTAMP, balance DECIMAL(12,2), active BOOLEAN, tags STRING, "
                "avatar BINARY, score FLOAT, ratio DOUBLE, external_id STRING, visits INT, "
                "small SMALLINT, total BIGINT, name STRING)",
                columns=(
                    ("id", "bigint"),
                    ("email", "string"),
                    ("created_at", "timestamp"),
                    ("balance", "decimal(12,2)"),
                    ("active", "boolean"),
                    ("tags", "string"),
                    ("avatar", "binary"),
                    ("score", "float"),
                    ("ratio", "double"),
                    ("external_id", "string"),
                    ("visits", "int"),
                    ("small", "smallint"),
                    ("total", "bigint"),
                    ("name", "string"),
                ),
                reason_contains="PRIMARY KEY",
            ),
        ),
    ),
    Case(
        "postgres_multi_clause",
        "postgres",
        "ALTER TABLE sales.customers ADD COLUMN last_login timestamp without time zone, "
        "ADD COLUMN visits integer DEFAULT 0, DROP COLUMN legacy_flag",
        (
            add(
                "sales.customers",
                "last_login",
                "timestamp",
                "ALTER TABLE sales.customers ADD COLUMNS (last_login TIMESTAMP)",
            ),
            add(
                "sales.customers",
                "visits",
                "int",
                "ALTER TABLE sales.customers ADD COLUMNS (visits INT)",
                "DEFAULT 0",
            ),
            drop_col(
                "sales.customers",
                "legacy_flag",
                "ALTER TABLE sales.customers DROP COLUMN legacy_flag",
            ),
        ),
    ),
    Case(
        "postgres_set_not_null",
        "postgres",
        "ALTER TABLE sales.customers ALTER COLUMN email SET NOT NULL",
        (other("sales.customers", "nullability", "email"),),
    ),
    Case(
        "postgres_create_index",
        "postgres",
        "CREATE INDEX CONCURRENTLY idx_customers_email ON sales.customers USING btree (email)",
        (index("sales.customers"),),
    ),
    Case(
        "postgres_truncate",
        "postgres",
        "TRUNCATE TABLE sales.customers RESTART IDENTITY",
        (Expected("truncate", "sales.customers", spark_sql="TRUNCATE TABLE sales.customers"),),
    ),
    Case(
        "postgres_add_foreign_key",
        "postgres",
        "ALTER TABLE ONLY sales.orders ADD CONSTRAINT orders_customer_fk "
        "FOREIGN KEY (customer_id) REFERENCES sales.customers(id)",
        (index("sales.orders"),),
    ),
    Case(
        "postgres_comment_on_table",
        "postgres",
        "COMMENT ON TABLE sales.customers IS 'customers'",
        (other("sales.customers", "COMMENT ON"),),
    ),
    Case(
        "postgres_drop_cascade",
        "postgres",
        "DROP TABLE IF EXISTS sales.tmp_import CASCADE",
        (
            Expected(
                "drop_table", "sales.tmp_import", spark_sql="DROP TABLE IF EXISTS sales.tmp_import"
            ),
        ),
    ),
    Case(
        "postgres_numeric_without_precision",
        "pg",
        "ALTER TABLE t ADD COLUMN amt numeric",
        (
            add(
                "t",
                "amt",
                "decimal(38,10)",
                "ALTER TABLE t ADD COLUMNS (amt DECIMAL(38,10))",
                "decimal(38,10)",
            ),
        ),
    ),
)

SQLSERVER_CASES = (
    Case(
        "sqlserver_add_null",
        "sqlserver",
        "ALTER TABLE [dbo].[Orders] ADD [Discount] INT NULL",
        (
            add(
                "dbo.Orders", "Discount", "int", "ALTER TABLE dbo.Orders ADD COLUMNS (Discount INT)"
            ),
        ),
    ),
    Case(
        "sqlserver_add_several",
        "SQLServer",
        "ALTER TABLE dbo.Orders ADD Notes nvarchar(max) NULL, Rate float, Ratio real",
        (
            add(
                "dbo.Orders", "Notes", "string", "ALTER TABLE dbo.Orders ADD COLUMNS (Notes STRING)"
            ),
            add("dbo.Orders", "Rate", "double", "ALTER TABLE dbo.Orders ADD COLUMNS (Rate DOUBLE)"),
            add("dbo.Orders", "Ratio", "float", "ALTER TABLE dbo.Orders ADD COLUMNS (Ratio FLOAT)"),
        ),
    ),
    Case(
        "sqlserver_alter_column",
        "mssql",
        "ALTER TABLE [dbo].[Orders] ALTER COLUMN [Amount] decimal(18,4) NOT NULL",
        (
            retype(
                "dbo.Orders",
                "Amount",
                "decimal(18,4)",
                "ALTER TABLE dbo.Orders ALTER COLUMN Amount TYPE DECIMAL(18,4)",
                "NOT NULL",
            ),
        ),
    ),
    Case(
        "sqlserver_drop_columns",
        "sqlserver",
        "ALTER TABLE [dbo].[Orders] DROP COLUMN [LegacyCode], [OldFlag]",
        (
            drop_col("dbo.Orders", "LegacyCode", "ALTER TABLE dbo.Orders DROP COLUMN LegacyCode"),
            drop_col("dbo.Orders", "OldFlag", "ALTER TABLE dbo.Orders DROP COLUMN OldFlag"),
        ),
    ),
    Case(
        "sqlserver_sp_rename_column",
        "sqlserver",
        "EXEC sp_rename 'dbo.Orders.Notes', 'Remarks', 'COLUMN'",
        (
            rename_col(
                "dbo.Orders",
                "Notes",
                "Remarks",
                "ALTER TABLE dbo.Orders RENAME COLUMN Notes TO Remarks",
            ),
        ),
    ),
    Case(
        "sqlserver_sp_rename_table",
        "sqlserver",
        "EXEC sp_rename 'dbo.Orders', 'OrdersArchive'",
        (
            rename_tab(
                "dbo.Orders", "OrdersArchive", "ALTER TABLE dbo.Orders RENAME TO OrdersArchive"
            ),
        ),
    ),
    Case(
        "sqlserver_sp_rename_named_arguments",
        "sqlserver",
        "EXEC sys.sp_rename @objname = N'[dbo].[Orders].[Qty]', @newname = N'Quantity', "
        "@objtype = N'COLUMN'",
        (
            rename_col(
                "dbo.Orders",
                "Qty",
                "Quantity",
                "ALTER TABLE dbo.Orders RENAME COLUMN Qty TO Quantity",
            ),
        ),
    ),
    Case(
        "sqlserver_create_ssms_script",
        "sqlserver",
        SQLSERVER_CUSTOMERS_DDL,
        (
            Expected(
                "create_table",
                "dbo.Customers",
                spark_sql="CREATE TABLE dbo.Customers (CustomerId INT, Name STRING, "
                "Balance DECIMAL(19,4), Active BOOLEAN, RowGuid STRING, CreatedAt TIMESTAMP)",
                columns=(
                    ("CustomerId", "int"),
                    ("Name", "string"),
                    ("Balance", "decimal(19,4)"),
                    ("Active", "boolean"),
                    ("RowGuid", "string"),
                    ("CreatedAt", "timestamp"),
                ),
                reason_contains="PRIMARY KEY",
            ),
        ),
    ),
    Case(
        "sqlserver_three_part_name",
        "sqlserver",
        "ALTER TABLE Sales.dbo.Orders ADD ShippedAt datetime2(7) NULL",
        (
            add(
                "Sales.dbo.Orders",
                "ShippedAt",
                "timestamp",
                "ALTER TABLE Sales.dbo.Orders ADD COLUMNS (ShippedAt TIMESTAMP)",
            ),
        ),
    ),
    Case(
        "sqlserver_types",
        "sql server",
        "ALTER TABLE dbo.T ADD a tinyint, b bit, c money, d uniqueidentifier, e datetimeoffset, "
        "f smalldatetime, g varbinary(max), h image, i ntext, j nchar(10), k float(24), "
        "l datetime",
        (
            add("dbo.T", "a", "smallint", "ALTER TABLE dbo.T ADD COLUMNS (a SMALLINT)"),
            add("dbo.T", "b", "boolean", "ALTER TABLE dbo.T ADD COLUMNS (b BOOLEAN)"),
            add("dbo.T", "c", "decimal(19,4)", "ALTER TABLE dbo.T ADD COLUMNS (c DECIMAL(19,4))"),
            add("dbo.T", "d", "string", "ALTER TABLE dbo.T ADD COLUMNS (d STRING)"),
            add("dbo.T", "e", "timestamp", "ALTER TABLE dbo.T ADD COLUMNS (e TIMESTAMP)"),
            add("dbo.T", "f", "timestamp", "ALTER TABLE dbo.T ADD COLUMNS (f TIMESTAMP)"),
            add("dbo.T", "g", "binary", "ALTER TABLE dbo.T ADD COLUMNS (g BINARY)"),
            add("dbo.T", "h", "binary", "ALTER TABLE dbo.T ADD COLUMNS (h BINARY)"),
            add("dbo.T", "i", "string", "ALTER TABLE dbo.T ADD COLUMNS (i STRING)"),
            add("dbo.T", "j", "string", "ALTER TABLE dbo.T ADD COLUMNS (j STRING)"),
            add("dbo.T", "k", "float", "ALTER TABLE dbo.T ADD COLUMNS (k FLOAT)"),
            add("dbo.T", "l", "timestamp", "ALTER TABLE dbo.T ADD COLUMNS (l TIMESTAMP)"),
        ),
    ),
    Case(
        "sqlserver_default_constraint",
        "sqlserver",
        "ALTER TABLE dbo.Orders ADD CONSTRAINT DF_Orders_Status DEFAULT 0 FOR Status",
        (index("dbo.Orders"),),
    ),
    Case(
        "sqlserver_create_index",
        "sqlserver",
        "CREATE NONCLUSTERED INDEX IX_Orders_Customer ON dbo.Orders (CustomerId) INCLUDE (Amount)",
        (index("dbo.Orders"),),
    ),
    Case(
        "sqlserver_go_batches",
        "sqlserver",
        "TRUNCATE TABLE dbo.Staging\nGO\nDROP TABLE IF EXISTS [dbo].[Staging]\nGO",
        (
            Expected("truncate", "dbo.Staging", spark_sql="TRUNCATE TABLE dbo.Staging"),
            Expected("drop_table", "dbo.Staging", spark_sql="DROP TABLE IF EXISTS dbo.Staging"),
        ),
    ),
)

BAD_INPUT_CASES = (
    Case("empty_text", "mysql", "", (bad("no statement text"),)),
    Case("none_text", "oracle", None, (bad("no statement text"),)),
    Case("only_separators", "mysql", " ; \n ;", (bad("no statement text"),)),
    Case("garbage", "mysql", "blah blah garbage", (bad("Invalid expression"),)),
    Case("bare_word", "postgres", "hello", (bad("not a DDL statement"),)),
    Case(
        "unterminated_string",
        "mysql",
        "ALTER TABLE t ADD c varchar(10) DEFAULT 'oops",
        (bad("Error tokenizing", table="t"),),
    ),
    Case(
        "unknown_clause",
        "mysql",
        "ALTER TABLE t ADD COLUMN c int, FROBNICATE everything",
        (
            add("t", "c", "int", "ALTER TABLE t ADD COLUMNS (c INT)"),
            bad("FROBNICATE", table="t"),
        ),
    ),
    Case(
        "unknown_dialect",
        "db2",
        "ALTER TABLE orders ADD COLUMN note VARCHAR(20)",
        (
            add(
                "orders",
                "note",
                "string",
                "ALTER TABLE orders ADD COLUMNS (note STRING)",
                "unknown dialect 'db2'",
            ),
        ),
    ),
    Case(
        "no_dialect",
        None,
        "DROP TABLE orders",
        (
            Expected(
                "drop_table",
                "orders",
                spark_sql="DROP TABLE orders",
                reason_contains="no dialect given",
            ),
        ),
    ),
)

CORPUS: tuple[Case, ...] = (
    *MYSQL_CASES,
    *ORACLE_CASES,
    *POSTGRES_CASES,
    *SQLSERVER_CASES,
    *BAD_INPUT_CASES,
)
