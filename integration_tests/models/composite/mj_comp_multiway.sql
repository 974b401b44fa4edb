{{ config(materialized='multijoin', strategy='multiway') }}

{#- comp_a.score, comp_b.score and comp_c.score collide: a and b get their input's name as
    prefix, c is renamed explicitly; comp_b keeps only score, comp_a drops nothing. -#}
{{ dbt_multijoin.multi_join(
    [ref('comp_a'), ref('comp_b'), ref('comp_c')],
    key=['region_id', 'device_id'],
    columns={'comp_b': ['score']},
    rename={'comp_c': {'score': 'c_score'}}
) }}
