"""`make java`: stop with one line when Java is missing or too old (instead of a JVM trace)."""

import sys

from dbt.adapters.lakehouse.java import java_problem

if __name__ == "__main__":
    message = java_problem()
    if message:
        print(f"error: {message}", file=sys.stderr)
        sys.exit(1)
