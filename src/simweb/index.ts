// Public surface of src/simweb/ (filled in by the module's own work).
export {};
