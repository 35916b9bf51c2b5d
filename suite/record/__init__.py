"""The results record, the format every stage reads and writes: the document and its writing, the event log, the claims of its header, text safety, bounded reading, the rules' version, errors."""
