"""The console's dialogs, one per module; each is a typed `ModalScreen` that always dismisses."""
