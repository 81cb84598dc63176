// Public surface of src/fetch/ (filled in by the module's own work).
export {};
