int s();
