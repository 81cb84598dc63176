// Public surface of src/dns/ (filled in by the module's own work).
export {};
