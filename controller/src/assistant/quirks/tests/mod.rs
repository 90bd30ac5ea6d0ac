mod recover;
mod visible;
