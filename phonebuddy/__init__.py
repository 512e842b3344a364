"""PhoneBuddy's composition layer: the front hall where every entry point assembles a run the same way
(`phonebuddy.assemble`), the `phonebuddy` command line and the headless `phonebuddy run`.

It sits above assistant_core, harness and speech; the app and training use it; nothing below imports it.
"""
