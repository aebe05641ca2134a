"""Core: records, the store, stages, executors, the registry, file-system rules, input reading."""
