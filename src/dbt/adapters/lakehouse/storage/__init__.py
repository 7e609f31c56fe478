"""Where the warehouse's files live: local disk, or object storage (object_store.py), and the
Delta log store that makes commits to object storage safe with several writers (java/)."""
