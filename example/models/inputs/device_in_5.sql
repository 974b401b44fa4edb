{{ example_input(5) }}
