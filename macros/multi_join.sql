{% macro multi_join(relations, key, join_type='full', strategy=none, columns=none, rename=none, names=none, changed_since=none) -%}
  {{- return(adapter.dispatch('multi_join', 'dbt_multijoin')(relations, key, join_type, strategy, columns, rename, names, changed_since)) -}}
{%- endmacro %}


{% macro default__multi_join(relations, key, join_type, strategy, columns, rename, names, changed_since) -%}
  {#- Column lists come from the database: only at execution time (dbt-utils' star() does the same). -#}
  {%- if not execute -%}
    {{- return('select 1 as multi_join_placeholder') -}}
  {%- endif -%}
  {%- set request = model.get('dbt_multijoin_request') if model is mapping else none -%}
  {%- if request is mapping -%}
    {#- The multijoin materialization renders the model again to plan a changed_keys run: it asks
        for this call's arguments, or for the changed keys' rows of its plan (changed_keys/plan.sql). -#}
    {{- return(dbt_multijoin._mj_answer_request(request, {'relations': relations, 'key': key, 'join_type': join_type, 'strategy': strategy,
        'columns': columns, 'rename': rename, 'names': names, 'changed_since': changed_since})) -}}
  {%- endif -%}
  {%- set spec = dbt_multijoin._mj_spec(relations, key, join_type, strategy, columns, rename, names) -%}
  {%- set incremental_strategy = dbt_multijoin._mj_config('incremental_strategy') -%}
  {%- if incremental_strategy == 'changed_keys' -%}
    {#- The whole model, as a full build writes it (with the presence columns of a partial-update
        model): what `dbt compile` shows, and what a unit test of the model checks. What a run
        applies is planned by the materialization from the inputs' changes, not by this SQL, so an
        is_incremental override in a unit test has nothing to select. -#}
    {#- dbt's is_incremental() needs `this`, which a unit test has only when given: read the
        unit test's own override instead. -#}
    {%- set overrides = model.get('overrides') if dbt_multijoin._mj_in_unit_test() else none -%}
    {%- if overrides is mapping and (overrides.get('macros') or {}).get('is_incremental') -%}
      {%- do dbt_multijoin._mj_fail("a unit test of a changed_keys model checks its full build: its SQL is the whole model, and what a run applies is planned from the inputs' changes when the model runs, so is_incremental has no meaning here. Drop the is_incremental override; test a refresh by building the model twice (docs/dbt_package.md, \"Unit tests\")") -%}
    {%- endif -%}
    {%- set spec = dbt_multijoin._mj_changed_keys_spec(spec, changed_since) -%}
  {%- elif changed_since is not none -%}
    {%- do dbt_multijoin._mj_fail("changed_since applies to incremental_strategy='changed_keys' only (the model's is '" ~ incremental_strategy ~ "')") -%}
  {%- endif -%}
  {%- if spec['strategy'] == 'balanced' -%}
    {{- return(dbt_multijoin._mj_render_balanced(spec)) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_render_chain(spec, hint=(spec['strategy'] == 'multiway'))) -}}
{%- endmacro %}
