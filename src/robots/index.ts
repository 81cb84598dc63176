// Public surface of src/robots/ (filled in by the module's own work).
export {};
