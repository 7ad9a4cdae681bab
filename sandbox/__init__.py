"""The local sandbox: the whole Route Health stack on 127.0.0.1 with embedded parts
(docs/design.md#sandbox)."""
