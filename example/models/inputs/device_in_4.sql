{{ example_input(4) }}
