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


{% macro _mj_config(key, default=none) -%}
  {#- The model's config `key`, for what multi_join renders. In a unit test dbt gives the model
      none of its config (config.get reads the unit test node's own), so there it comes from the
      model's own config() call: its literal arguments key='text', key=true|false or a number
      (_mj_config_call_literals). A config set in dbt_project.yml or a properties file, or by an
      expression, is not seen there: the default applies. -#}
  {%- if not dbt_multijoin._mj_in_unit_test() -%}
    {{- return(config.get(key, default)) -}}
  {%- endif -%}
  {%- set found = dbt_multijoin._mj_config_call_literals(model.raw_code).get(key) -%}
  {{- return(default if found is none else found) -}}
{%- endmacro %}


{% macro _mj_config_call_literals(raw_code) -%}
  {#- {key: value} of the literal keyword arguments of every {{ config(...) }} call in a model's
      source; a later call's value wins, as in dbt. -#}
  {%- set found = {} -%}
  {%- for call in modules.re.findall('\\{\\{-?\\s*config\\s*\\((.*?)\\)\\s*-?\\}\\}', raw_code or '', modules.re.S) -%}
    {%- for match in modules.re.finditer('(?:^|[,(\\s])([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*(?:\'([^\'\\\\]*)\'|"([^"\\\\]*)"|(true|false|True|False)\\b|(-?[0-9]+)\\b)', call) -%}
      {%- if match.group(4) -%}
        {%- set value = match.group(4) | lower == 'true' -%}
      {%- elif match.group(5) -%}
        {%- set value = match.group(5) | int -%}
      {%- else -%}
        {%- set value = match.group(2) if match.group(2) is not none else match.group(3) -%}
      {%- endif -%}
      {%- do found.update({match.group(1): value}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{- return(found) -}}
{%- endmacro %}
