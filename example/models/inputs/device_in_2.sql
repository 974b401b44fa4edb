{{ example_input(2) }}
