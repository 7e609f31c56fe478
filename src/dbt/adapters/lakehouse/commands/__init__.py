"""The `lakehouse` command (the light entry point is dbt/adapters/lakehouse_command.py): its commands, the warm runner, catch-up, maintenance."""
