"""The Spark session: its settings, the JVM and Java, the pinned jars, the metastore, Spark Connect, literal bindings."""
