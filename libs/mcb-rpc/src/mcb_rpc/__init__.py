"""mcb_rpc: transport glue shared by the services (settings, tokens, error tables, clients).

The core library (mcb_common) never imports this package; services do.
"""
