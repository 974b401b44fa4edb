{{ example_input(8) }}
