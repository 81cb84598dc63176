// Public surface of src/url/ (filled in by the module's own work).
export {};
