{{ example_input(7) }}
