{#- Private: the multijoin materialization's config, validated before any statement runs. -#}

{% macro _mj_model_settings() -%}
  {#- {strategy, fallback, confs: [{key, value}, ...]}: the model's spark_conf, then the
      strategy's own confs. -#}
  {%- set strategy = dbt_multijoin._mj_strategy() -%}
  {%- set fallback = config.get('allow_vanilla_fallback', false) -%}
  {%- if fallback is not sameas true and fallback is not sameas false -%}
    {%- do dbt_multijoin._mj_fail("allow_vanilla_fallback must be true or false, got '" ~ fallback ~ "'") -%}
  {%- endif -%}
  {%- set spark_conf = config.get('spark_conf') -%}
  {%- if spark_conf is none -%}
    {%- set spark_conf = {} -%}
  {%- elif spark_conf is not mapping -%}
    {%- do dbt_multijoin._mj_fail("spark_conf must be a mapping of conf keys to values, got '" ~ spark_conf ~ "'") -%}
  {%- endif -%}
  {%- set confs = [] -%}
  {%- for key, raw in spark_conf.items() -%}
    {%- if not dbt_multijoin._mj_is_conf_key(key) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is not a valid conf key (dotted name of letters, digits, '_' and '-')") -%}
    {%- elif key in ['spark.sql.extensions', 'spark.jars'] -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is static: it is set when the session or Thrift Server starts (see `dbt-multijoin profile`)") -%}
    {%- elif (key | lower) == 'spark.multijoin.failonfallback' -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is set by the multiway strategy: use allow_vanilla_fallback=true instead") -%}
    {%- elif (key | lower).startswith('spark.dbt_multijoin.') -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is reserved for the package's own bookkeeping") -%}
    {%- endif -%}
    {%- if raw is sameas true or raw is sameas false -%}
      {%- set value = (raw | string | lower) -%}
    {%- elif raw is number -%}
      {%- set value = raw | string -%}
    {%- else -%}
      {%- set value = raw -%}
    {%- endif -%}
    {%- if not dbt_multijoin._mj_is_conf_value(value) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf value for '" ~ key ~ "' is not allowed: " ~ (value | string)[:80] ~ " (allowed: letters, digits and _ . , : / + @ % -)") -%}
    {%- endif -%}
    {%- do confs.append({'key': key, 'value': value}) -%}
  {%- endfor -%}
  {%- if strategy == 'multiway' -%}
    {#- No silent fallback: a hinted query that cannot use the operator fails with the reason. -#}
    {%- do confs.append({'key': 'spark.multijoin.failOnFallback', 'value': 'true' if fallback is sameas false else 'false'}) -%}
  {%- endif -%}
  {{- return({'strategy': strategy, 'fallback': fallback, 'confs': confs}) -}}
{%- endmacro %}
