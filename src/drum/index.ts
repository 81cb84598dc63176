// Public surface of src/drum/ (filled in by the module's own work).
export {};
