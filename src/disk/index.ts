// Public surface of src/disk/ (filled in by the module's own work).
export {};
