-- Concurrent contact creates all appended to the trigram index's shared pending list (one lock) and
-- now and then one of them paid for merging it. Without it, each insert updates the index directly.
ALTER INDEX contacts_names_trgm SET (fastupdate = off);
