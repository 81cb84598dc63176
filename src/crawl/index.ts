// Public surface of src/crawl/ (filled in by the module's own work).
export {};
