// Public surface of src/html/ (filled in by the module's own work).
export {};
