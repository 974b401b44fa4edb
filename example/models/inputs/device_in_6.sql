{{ example_input(6) }}
