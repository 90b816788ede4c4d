#ifndef TFD_VERSION_H
#define TFD_VERSION_H
#define TFD_VERSION "0.1.0"
#endif
