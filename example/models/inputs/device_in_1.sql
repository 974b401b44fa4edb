{{ example_input(1) }}
