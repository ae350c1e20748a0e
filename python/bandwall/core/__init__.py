"""The ground every other part stands on: errors, the registry, native executables, records and their schema, the store, the topology and CPU lists, the policy tables, figures of merit."""
