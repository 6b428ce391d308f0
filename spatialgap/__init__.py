"""The distribution's own name as a package, for frameworks that name what a package registers
after its top-level module: inspect_ai finds `spatialgap/qa`, `spatialgap/edit` and
`spatialgap/spatialgap` in spatialgap.inspect_tasks (the `inspect_ai` entry point). The library
is `scoring`."""
