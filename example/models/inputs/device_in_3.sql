{{ example_input(3) }}
