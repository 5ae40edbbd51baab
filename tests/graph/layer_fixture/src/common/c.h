int c();
