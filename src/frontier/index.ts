// Public surface of src/frontier/ (filled in by the module's own work).
export {};
