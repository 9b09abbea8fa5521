"""The pickup board's live streams, shared by the REST and dashboard doors of one process:
the hub that fans the broadcast table out, and the Server-Sent Events it is served as."""
