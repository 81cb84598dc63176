// Public surface of src/store/ (filled in by the module's own work).
export {};
