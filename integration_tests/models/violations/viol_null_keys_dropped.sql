-- Wrong on purpose: the key spine of a composite-key multi-join of comp_a, comp_b and comp_c that
-- leaves out every key with a NULL component (a multi-join keeps such a row, NULL-padded). Lost:
-- (1, NULL) of comp_a and comp_b, (NULL, 7) of comp_a and comp_c.
select distinct
    input_keys.region_id,
    input_keys.device_id
from (
    select
        region_id,
        device_id
    from {{ ref('comp_a') }}
    union all
    select
        region_id,
        device_id
    from {{ ref('comp_b') }}
    union all
    select
        region_id,
        device_id
    from {{ ref('comp_c') }}
) as input_keys
where input_keys.region_id is not null and input_keys.device_id is not null
